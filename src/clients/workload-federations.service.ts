// Workload federation rules through the administration API (docs/workload-federation.md): a
// service client's rules are added and removed under its row lock, each with its audit record in
// the same transaction.
import { inChange } from '../audit/index.ts';
import { issuerOf } from '../kernel/audiences.ts';
import type { Queryable, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import { lockClientForSecrets } from './client-secrets.repo.ts';
import { findClient } from './clients.repo.ts';
import type { Change, ClientsDeps } from './clients.service.ts';
import {
  WORKLOAD_LIMITS,
  type WorkloadFederationInput,
  type WorkloadRule,
  workloadRuleProblems,
} from './workload-federation.ts';
import {
  deleteWorkloadRule,
  insertWorkloadRule,
  listWorkloadRules,
  type StoredWorkloadRule,
} from './workload-federations.repo.ts';

interface Owner {
  id: string;
  client_id: string;
}

async function serviceClient(q: Queryable, realmId: string, clientId: string): Promise<Owner> {
  const client = await findClient(q, realmId, clientId);
  if (!client) throw problem.notFound('no such client');
  if (client.type !== 'service') {
    throw problem.conflict('only service clients act as workloads; this client is of another type');
  }
  return client;
}

async function lockedServiceClient(tx: Tx, realmId: string, clientId: string): Promise<Owner> {
  const client = await serviceClient(tx, realmId, clientId);
  await lockClientForSecrets(tx, realmId, client.id);
  return client;
}

export async function addWorkloadRule(
  deps: ClientsDeps & { publicOrigin: string; realmName: string },
  clientId: string,
  input: WorkloadFederationInput,
  c: Change,
): Promise<StoredWorkloadRule> {
  const errors = workloadRuleProblems(input, deps.config.environment);
  if (errors.length > 0) throw problem.validation(errors);
  return inChange(deps.db, c, async (tx, record) => {
    const client = await lockedServiceClient(tx, c.realmId, clientId);
    const existing = await listWorkloadRules(tx, c.realmId, client.id);
    if (existing.length >= WORKLOAD_LIMITS.maxRulesPerClient) {
      throw problem.conflict(
        `a client has at most ${WORKLOAD_LIMITS.maxRulesPerClient} workload federation rules; remove one first`,
      );
    }
    const rule: WorkloadRule = {
      id: newId('wlf', c.now.getTime()),
      name: input.name,
      issuer: input.issuer,
      // Without one, the assertion is meant for this realm: its issuer identifier.
      audience: input.audience ?? issuerOf(deps.publicOrigin, deps.realmName),
      jwksUri: input.jwksUri ?? null,
      jwks: input.jwks ?? null,
      claims: input.claims,
    };
    const stored = await insertWorkloadRule(tx, c.realmId, client.id, rule, c.now);
    await record.audit('client.workload_federation.added', {
      category: 'security',
      target: { type: 'client', id: client.id },
      signal: 'credential_issued',
      data: {
        client_id: client.client_id,
        rule_id: rule.id,
        issuer: rule.issuer,
        claims: Object.keys(rule.claims),
      },
    });
    return stored;
  });
}

export async function workloadRulesOf(
  deps: ClientsDeps,
  realmId: string,
  clientId: string,
): Promise<StoredWorkloadRule[]> {
  const client = await serviceClient(deps.db, realmId, clientId);
  return listWorkloadRules(deps.db, realmId, client.id);
}

export async function removeWorkloadRule(
  deps: ClientsDeps,
  clientId: string,
  ruleId: string,
  c: Change,
): Promise<void> {
  await inChange(deps.db, c, async (tx, record) => {
    const client = await lockedServiceClient(tx, c.realmId, clientId);
    const removed = await deleteWorkloadRule(tx, c.realmId, client.id, ruleId);
    if (!removed) throw problem.notFound('no such workload federation rule');
    await record.audit('client.workload_federation.removed', {
      category: 'security',
      target: { type: 'client', id: client.id },
      data: { client_id: client.client_id, rule_id: ruleId, issuer: removed.issuer },
    });
  });
}
