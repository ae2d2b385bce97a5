// The administrator's side of dynamic client registration (docs/oauth-registration.md): initial
// access tokens (1..1000 uses, counted, revocable; the token is shown once and kept as a digest) and
// the approval queue of held registrations. Each change: rows, audit record and events in one
// transaction.
import { inChange } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import { digestToken } from '../kernel/digest.ts';
import type { Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { randomToken } from '../platform/ids.ts';
import {
  endRegistration,
  newInitialAccessTokenId,
  recordRegistrationChange,
} from './client-registration.service.ts';
import { type ClientRecord, findClientRecord, lockClientRecord } from './clients.repo.ts';
import type { ClientsDeps } from './clients.service.ts';
import {
  type InitialAccessTokenRow,
  insertInitialAccessToken,
  listInitialAccessTokens,
  listRegistrations,
  lockRegistration,
  type RegistrationRow,
  type RegistrationStatus,
  revokeInitialAccessToken,
  updateRegistration,
} from './registration.repo.ts';

/** Document 2, Limits: an initial access token serves 1..1000 registrations. */
export const MAX_INITIAL_ACCESS_TOKEN_USES = 1000;

export interface NewInitialAccessToken {
  maxUses: number;
  expiresInSeconds: number | null;
  description: string | null;
}

export async function createInitialAccessToken(
  deps: ClientsDeps,
  input: NewInitialAccessToken,
  c: Call,
): Promise<{ row: InitialAccessTokenRow; token: string }> {
  const token = `pa_iat_${randomToken(32)}`;
  const expiresAt =
    input.expiresInSeconds === null ? null : new Date(c.now.getTime() + input.expiresInSeconds * 1000);
  return inChange(deps.db, c, async (tx, record) => {
    const row = await insertInitialAccessToken(
      tx,
      c.realmId,
      {
        id: newInitialAccessTokenId(c.now),
        digest: digestToken(token),
        description: input.description,
        maxUses: input.maxUses,
        expiresAt,
      },
      c.now,
    );
    if (!row) throw new Error('the initial access token was not stored');
    await record.audit('client.initial_access_token.created', {
      category: 'configuration',
      target: { type: 'initial_access_token', id: row.id },
      signal: 'credential_issued',
      data: { initial_access_token_id: row.id, max_uses: row.max_uses, expires_at: row.expires_at },
    });
    return { row, token };
  });
}

export const initialAccessTokens = (deps: ClientsDeps, realmId: string) =>
  listInitialAccessTokens(deps.db, realmId);

export async function revokeInitialAccess(deps: ClientsDeps, id: string, c: Call): Promise<void> {
  await inChange(deps.db, c, async (tx, record) => {
    const row = await revokeInitialAccessToken(tx, c.realmId, id, c.now);
    if (!row) throw problem.notFound('no such initial access token, or it is revoked already');
    await record.audit('client.initial_access_token.revoked', {
      category: 'configuration',
      target: { type: 'initial_access_token', id: row.id },
      signal: 'configuration_change',
      data: { initial_access_token_id: row.id, uses: row.uses, max_uses: row.max_uses },
    });
  });
}

export interface QueueItem {
  registration: RegistrationRow;
  client: ClientRecord;
}

export async function listClientRegistrations(
  deps: ClientsDeps,
  realmId: string,
  status: RegistrationStatus | null,
  limit: number,
): Promise<QueueItem[]> {
  const rows = await listRegistrations(deps.db, realmId, status, limit);
  const out: QueueItem[] = [];
  for (const registration of rows) {
    const client = await findClientRecord(deps.db, realmId, registration.client_id);
    if (client) out.push({ registration, client });
  }
  return out;
}

async function lockPending(tx: Tx, realmId: string, clientId: string) {
  const reg = await lockRegistration(tx, realmId, clientId);
  if (!reg) throw problem.notFound('no such registration');
  if (reg.status !== 'pending') throw problem.conflict(`the registration is ${reg.status}, not pending`);
  const client = await lockClientRecord(tx, realmId, clientId);
  if (!client) throw problem.notFound('no such registration');
  return { reg, client };
}

/** A registration and its client as the queue shows them, after a decision in `tx`. */
async function queueItemOf(tx: Tx, realmId: string, clientId: string): Promise<QueueItem> {
  const registration = await lockRegistration(tx, realmId, clientId);
  const client = await findClientRecord(tx, realmId, clientId);
  if (!registration || !client) throw problem.notFound('no such registration');
  return { registration, client };
}

/** Lets a held client out: it becomes active and may sign people in and get tokens. */
export async function approveRegistration(deps: ClientsDeps, clientId: string, c: Call): Promise<QueueItem> {
  return inChange(deps.db, c, async (tx, record) => {
    const { reg, client } = await lockPending(tx, c.realmId, clientId);
    await updateRegistration(
      tx,
      c.realmId,
      client.id,
      { status: 'approved', tokenDigest: reg.registration_token_digest, decided: true },
      c.now,
    );
    await recordRegistrationChange(tx, record, client, {
      type: 'client.registration.approved',
      now: c.now,
      move: { state: 'active', event: 'active' },
      data: { status: 'approved' },
    });
    return queueItemOf(tx, c.realmId, clientId);
  });
}

/** Refuses a held client: it stays disabled for good and its registration access token ends. */
export async function rejectRegistration(deps: ClientsDeps, clientId: string, c: Call): Promise<QueueItem> {
  return inChange(deps.db, c, async (tx, record) => {
    const { client } = await lockPending(tx, c.realmId, clientId);
    await endRegistration(tx, record, c.realmId, client, 'rejected', c.now);
    return queueItemOf(tx, c.realmId, clientId);
  });
}
