// Secret rotation through the administration API (docs/api-clients.md): only clients using a
// secret method have secrets; the limit, generation and audits are in client-secrets.ts.
import type { Db, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import {
  type IssuedClientSecret,
  issueClientSecret,
  listActiveSecrets,
  revokeClientSecret,
} from './client-secrets.ts';
import { type ClientRecord, findClientRecord } from './clients.repo.ts';
import { type Change, type ClientsDeps, hasSecrets, needKeyring } from './clients.service.ts';

async function secretClient(q: Tx | Db, realmId: string, clientId: string): Promise<ClientRecord> {
  const record = await findClientRecord(q, realmId, clientId);
  if (!record) throw problem.notFound('no such client');
  if (!hasSecrets(record.token_endpoint_auth_method)) {
    throw problem.conflict(`a client using ${record.token_endpoint_auth_method} has no secrets`);
  }
  return record;
}

export async function issueSecret(
  deps: ClientsDeps,
  clientId: string,
  expiresAt: Date | null,
  c: Change,
): Promise<IssuedClientSecret> {
  const keyring = needKeyring(deps);
  return deps.db.tx(async (tx) => {
    const record = await secretClient(tx, c.realmId, clientId);
    // The limit of active secrets is enforced under the client's row lock (409 past it).
    return issueClientSecret(tx, keyring, c.realmId, record.id, c.now, {
      actor: c.actor,
      expiresAt,
      correlationId: c.correlationId,
    });
  });
}

export async function listSecrets(deps: ClientsDeps, realmId: string, clientId: string, now: Date) {
  const record = await secretClient(deps.db, realmId, clientId);
  return listActiveSecrets(deps.db, realmId, record.id, now);
}

export async function revokeSecret(deps: ClientsDeps, clientId: string, secretId: string, c: Change) {
  return deps.db.tx(async (tx) => {
    const record = await secretClient(tx, c.realmId, clientId);
    return revokeClientSecret(tx, c.realmId, record.id, secretId, c.now, {
      actor: c.actor,
      correlationId: c.correlationId,
    });
  });
}
