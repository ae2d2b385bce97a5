// API keys (docs/api-keys.md): long-lived automation credentials of one service principal. Issuing
// and revoking each write the row and the audit record in one transaction; issuing carries the
// credential_issued signal, so the same transaction also queues its security.alert event.
import { inChange, type Recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Db, Queryable, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import { type AdminChange, invalid } from '../roles/admin-call.ts';
import { apiKeySecretMatches, newApiKey } from './api-key-secret.ts';
import type { CreateApiKeyInput } from './api-keys.decode.ts';
import {
  type ApiKeyRow,
  countLiveApiKeys,
  findApiKeyVerifier,
  insertApiKey,
  lockApiKey,
  revokeApiKeysOfPrincipal,
  setApiKeyRevoked,
} from './api-keys.repo.ts';
import { lockPrincipal } from './principals.repo.ts';

const DAY_MS = 86_400_000;
/** Decisions (docs/decisions.md, API keys): lifetime default and ceiling, live keys per principal. */
export const API_KEY_DEFAULT_DAYS = 90;
export const API_KEY_MAX_DAYS = 365;
export const MAX_LIVE_API_KEYS = 10;

export type ApiKeyState = 'active' | 'revoked' | 'expired';

export const apiKeyState = (k: ApiKeyRow, now: Date): ApiKeyState =>
  k.revoked_at !== null
    ? 'revoked'
    : new Date(k.expires_at).getTime() <= now.getTime()
      ? 'expired'
      : 'active';

function expiryOf(input: CreateApiKeyInput, now: Date): Date {
  if (input.expiresAt === undefined) return new Date(now.getTime() + API_KEY_DEFAULT_DAYS * DAY_MS);
  const at = new Date(input.expiresAt);
  if (at.getTime() <= now.getTime()) throw invalid('expires_at', 'not_in_future', 'must be later than now');
  if (at.getTime() > now.getTime() + API_KEY_MAX_DAYS * DAY_MS)
    throw invalid('expires_at', 'too_far', `at most ${API_KEY_MAX_DAYS} days from now`);
  return at;
}

const auditKey = (record: Recorder, type: 'api_key.created' | 'api_key.revoked', k: ApiKeyRow, extra = {}) =>
  record.audit(type, {
    category: 'security',
    target: { type: 'service_principal', id: k.service_principal_id },
    ...(type === 'api_key.created' ? { signal: 'credential_issued' as const } : {}),
    data: { api_key_id: k.id, ...extra },
  });

/** Issues a key; the key itself is in the answer only. */
export async function createApiKey(
  db: Db,
  c: AdminChange,
  input: CreateApiKeyInput,
): Promise<{ row: ApiKeyRow; key: string }> {
  return inChange(db, c, async (tx, record) => {
    // The principal's row lock makes the count and the insert one step.
    const p = await lockPrincipal(tx, c.realmId, input.servicePrincipalId);
    if (!p) throw invalid('service_principal_id', 'unknown_service_principal', 'no such service principal');
    if (p.state !== 'active') throw problem.conflict('the service principal is disabled');
    const expiresAt = expiryOf(input, c.now);
    if ((await countLiveApiKeys(tx, c.realmId, p.id, c.now)) >= MAX_LIVE_API_KEYS)
      throw problem.conflict(
        `a service principal has at most ${MAX_LIVE_API_KEYS} live API keys; revoke one first`,
      );
    const id = newId('apk', c.now.getTime());
    const { key, digest } = newApiKey(id);
    await insertApiKey(
      tx,
      c.realmId,
      { id, principalId: p.id, name: input.name, secretDigest: digest, expiresAt },
      c.now,
    );
    const row: ApiKeyRow = {
      id,
      service_principal_id: p.id,
      name: input.name,
      created_at: c.now,
      expires_at: expiresAt,
      revoked_at: null,
    };
    await auditKey(record, 'api_key.created', row, { expires_at: expiresAt.toISOString() });
    return { row, key };
  });
}

/** Revokes a key; revoking a revoked key changes and audits nothing. */
export async function revokeApiKey(db: Db, c: AdminChange, id: string): Promise<void> {
  await inChange(db, c, async (tx, record) => {
    const k = await lockApiKey(tx, c.realmId, id);
    if (!k) throw problem.notFound('no such API key');
    if (k.revoked_at !== null) return;
    await setApiKeyRevoked(tx, c.realmId, id, c.now);
    await auditKey(record, 'api_key.revoked', k);
  });
}

/** A deleted principal's keys end with it, inside its deletion's transaction. */
export async function revokeKeysOfDeletedPrincipal(tx: Tx, record: Recorder, c: Call, principalId: string) {
  for (const id of await revokeApiKeysOfPrincipal(tx, c.realmId, principalId, c.now))
    await record.audit('api_key.revoked', {
      category: 'security',
      target: { type: 'service_principal', id: principalId },
      data: { api_key_id: id, reason: 'service_principal_deleted' },
    });
}

/**
 * The service principal a presented key acts for, or null: unknown, wrong secret, revoked,
 * expired, or a principal no longer active. The digest is compared even for an unknown id, so the
 * answer does not tell which.
 */
export async function principalOfApiKey(
  q: Queryable,
  realmId: string,
  presented: { id: string; secret: string },
  now: Date,
): Promise<string | null> {
  const k = await findApiKeyVerifier(q, realmId, presented.id);
  const matches = apiKeySecretMatches(presented.secret, k?.secret_digest ?? UNKNOWN_DIGEST);
  if (!k || !matches || apiKeyState(k, now) !== 'active' || k.principal_state !== 'active') return null;
  return k.service_principal_id;
}

const UNKNOWN_DIGEST = '0'.repeat(64);
