// Client secrets (spec doc 2, Limits: active secrets per client): generation, keyed verifiers, and
// the issue, revoke and list use cases. Secrets carry 256 random bits, so a verifier is one
// HMAC-SHA-256 under a root-key-derived key (bench/README.md): a password KDF would only cap the token
// endpoint. Each verifier records its root key version, so it outlives a root key rotation.
import { createHmac, type KeyObject, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Actor } from '../audit/audit.types.ts';
import { recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Queryable, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import { currentPolicy, policyValue } from '../realms/index.ts';
import {
  type ClientSecretRow,
  countActiveSecrets,
  findActiveSecrets,
  findActiveSecretsOfClients,
  findClientSecret,
  insertClientSecret,
  lockClientForSecrets,
  updateSecretRevoked,
} from './client-secrets.repo.ts';

export const CLIENT_SECRET_PREFIX = 'pa_cs_';
export const MAX_ACTIVE_CLIENT_SECRETS = 3;
const SECRET_BYTES = 32;
const SECRET_SHAPE = /^pa_cs_[A-Za-z0-9_-]{43}$/;

/** Token endpoint methods that present a secret; other clients never get one. */
export const SECRET_AUTH_METHODS: ReadonlySet<string> = new Set([
  'client_secret_basic',
  'client_secret_post',
]);

/** A new secret: the prefix (so secret scanners can find leaked ones) and 32 random bytes, base64url. */
export const generateClientSecret = (): string =>
  CLIENT_SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64url');

export const hasClientSecretShape = (value: string): boolean => SECRET_SHAPE.test(value);

// Realm and client row ids never contain '/', so the input names exactly one (realm, client, secret).
const digestWith = (key: KeyObject, realmId: string, clientRowId: string, secret: string): Buffer =>
  createHmac('sha256', key).update(`${realmId}/${clientRowId}/${secret}`, 'utf8').digest();

/** The stored verifier of a secret, bound to its client so a row copied elsewhere verifies nothing. */
export function clientSecretVerifier(
  keyring: RootKeyring,
  keyVersion: number,
  realmId: string,
  clientRowId: string,
  secret: string,
): string {
  return digestWith(keyring.macKey('client-secret', keyVersion), realmId, clientRowId, secret).toString(
    'base64url',
  );
}

export interface StoredVerifier {
  id: string;
  verifier: string;
  keyVersion: number;
}

/**
 * The id of the candidate the presented secret matches, or null. One HMAC per root key version
 * among the candidates (normally one), and every candidate is compared in constant time, so the
 * time taken does not depend on which one matched. A version no longer configured matches nothing.
 */
export function matchClientSecret(
  keyring: RootKeyring,
  realmId: string,
  clientRowId: string,
  presented: string,
  candidates: readonly StoredVerifier[],
): string | null {
  const loaded = new Set(keyring.versions());
  const digests = new Map<number, Buffer | null>();
  let matched: string | null = null;
  for (const c of candidates) {
    let digest = digests.get(c.keyVersion);
    if (digest === undefined) {
      digest = loaded.has(c.keyVersion)
        ? digestWith(keyring.macKey('client-secret', c.keyVersion), realmId, clientRowId, presented)
        : null;
      digests.set(c.keyVersion, digest);
    }
    const stored = Buffer.from(c.verifier, 'base64url');
    const equal = digest !== null && stored.length === digest.length && timingSafeEqual(stored, digest);
    if (equal && matched === null) matched = c.id;
  }
  return matched;
}

/** The HMAC an unknown client would have cost, so its answer takes as long as a wrong secret's. */
export function spendClientSecretCheck(keyring: RootKeyring, presented: string): void {
  digestWith(keyring.macKey('client-secret'), 'rlm_none', 'cli_none', presented);
}

export interface ClientSecretMetadata {
  id: string;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** Shown once: the secret itself is never stored or returned again. */
export interface IssuedClientSecret {
  id: string;
  secret: string;
  createdAt: Date;
  expiresAt: Date | null;
}

export interface IssueClientSecretOptions {
  actor: Actor;
  expiresAt?: Date | null;
  correlationId?: string;
}

const callOf = (realmId: string, now: Date, o: { actor: Actor; correlationId?: string }): Call => ({
  realmId,
  actor: o.actor,
  correlationId: o.correlationId ?? null,
  now,
});

const toDate = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

const metadataOf = (r: ClientSecretRow): ClientSecretMetadata => ({
  id: r.id,
  createdAt: new Date(r.created_at),
  expiresAt: toDate(r.expires_at),
  lastUsedAt: toDate(r.last_used_at),
  revokedAt: toDate(r.revoked_at),
});

const DAY_MS = 24 * 3600 * 1000;

/**
 * machine.client_secret_max_lifetime_days (0: no limit): a secret issued without an expiry gets the
 * longest one the realm allows; one asked to live longer is refused (docs/decisions.md).
 */
async function cappedExpiry(tx: Tx, realmId: string, asked: Date | null, now: Date): Promise<Date | null> {
  const days = policyValue(await currentPolicy(tx, realmId), 'machine', 'client_secret_max_lifetime_days');
  if (typeof days !== 'number' || !Number.isInteger(days) || days <= 0) return asked;
  const latest = new Date(now.getTime() + days * DAY_MS);
  if (asked === null) return latest;
  if (asked.getTime() > latest.getTime())
    throw problem.validation([
      {
        field: 'expires_at',
        code: 'too_large',
        detail: `the realm allows client secrets at most ${days} days (machine.client_secret_max_lifetime_days)`,
      },
    ]);
  return asked;
}

export async function issueClientSecret(
  tx: Tx,
  keyring: RootKeyring,
  realmId: string,
  clientRowId: string,
  now: Date,
  opts: IssueClientSecretOptions,
): Promise<IssuedClientSecret> {
  // The lock makes the count below and the insert one step: two concurrent issues never pass it together.
  const client = await lockClientForSecrets(tx, realmId, clientRowId);
  if (!client) throw problem.notFound('no such client');
  if (!SECRET_AUTH_METHODS.has(client.token_endpoint_auth_method)) {
    throw problem.conflict(`a client using ${client.token_endpoint_auth_method} has no secrets`);
  }
  const asked = opts.expiresAt ?? null;
  if (asked && asked.getTime() <= now.getTime()) {
    throw problem.validation([
      { field: 'expires_at', code: 'not_in_future', detail: 'must be later than now' },
    ]);
  }
  const expiresAt = await cappedExpiry(tx, realmId, asked, now);
  if ((await countActiveSecrets(tx, realmId, clientRowId, now)) >= MAX_ACTIVE_CLIENT_SECRETS) {
    throw problem.conflict(
      `a client has at most ${MAX_ACTIVE_CLIENT_SECRETS} active secrets; revoke one before issuing another`,
    );
  }
  const id = newId('csk', now.getTime());
  const secret = generateClientSecret();
  const keyVersion = keyring.activeVersion;
  await insertClientSecret(
    tx,
    realmId,
    {
      id,
      clientRowId,
      verifier: clientSecretVerifier(keyring, keyVersion, realmId, clientRowId, secret),
      keyVersion,
      expiresAt,
    },
    now,
  );
  await recorder(tx, callOf(realmId, now, opts)).audit('client.secret.issued', {
    category: 'security',
    target: { type: 'client', id: clientRowId },
    signal: 'credential_issued',
    data: { client_id: client.client_id, secret_id: id, expires_at: expiresAt?.toISOString() ?? null },
  });
  return { id, secret, createdAt: now, expiresAt };
}

/** Revokes one secret. Revoking it again returns it unchanged and audits nothing more. */
export async function revokeClientSecret(
  tx: Tx,
  realmId: string,
  clientRowId: string,
  secretId: string,
  now: Date,
  opts: { actor: Actor; correlationId?: string },
): Promise<ClientSecretMetadata> {
  const client = await lockClientForSecrets(tx, realmId, clientRowId);
  if (!client) throw problem.notFound('no such client');
  const revoked = await updateSecretRevoked(tx, realmId, clientRowId, secretId, now);
  if (!revoked) {
    const existing = await findClientSecret(tx, realmId, clientRowId, secretId);
    if (!existing) throw problem.notFound('no such client secret');
    return metadataOf(existing);
  }
  await recorder(tx, callOf(realmId, now, opts)).audit('client.secret.revoked', {
    category: 'security',
    target: { type: 'client', id: clientRowId },
    data: { client_id: client.client_id, secret_id: secretId },
  });
  return metadataOf(revoked);
}

/** Unrevoked, unexpired secrets of a client, oldest first: metadata only, never verifiers. */
export async function listActiveSecrets(
  q: Queryable,
  realmId: string,
  clientRowId: string,
  now: Date,
): Promise<ClientSecretMetadata[]> {
  return (await findActiveSecrets(q, realmId, clientRowId, now)).map(metadataOf);
}

/** Active secret metadata of several clients, by client row id (clients without any are absent). */
export async function listActiveSecretsOfClients(
  q: Queryable,
  realmId: string,
  clientRowIds: readonly string[],
  now: Date,
): Promise<Map<string, ClientSecretMetadata[]>> {
  const out = new Map<string, ClientSecretMetadata[]>();
  if (clientRowIds.length === 0) return out;
  for (const row of await findActiveSecretsOfClients(q, realmId, clientRowIds, now)) {
    const list = out.get(row.client_row_id) ?? [];
    list.push(metadataOf(row));
    out.set(row.client_row_id, list);
  }
  return out;
}
