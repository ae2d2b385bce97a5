// Rows of workload_federations (migration 0049): the rules a service client trusts outside
// issuers' JWTs by (docs/workload-federation.md).
import type { Queryable } from '../platform/db/db.ts';
import type { JwkSet } from './client-rules.ts';
import type { WorkloadRule } from './workload-federation.ts';

interface RuleRow {
  id: string;
  name: string;
  issuer: string;
  audience: string;
  jwks_uri: string | null;
  jwks: JwkSet | string | null;
  claims: Record<string, string[]> | string;
  created_at: Date;
}

export interface StoredWorkloadRule extends WorkloadRule {
  createdAt: Date;
}

// pg hands jsonb over parsed; PGlite may hand it over as text.
const json = <T>(v: T | string): T => (typeof v === 'string' ? (JSON.parse(v) as T) : v);

const ruleOf = (r: RuleRow): StoredWorkloadRule => ({
  id: r.id,
  name: r.name,
  issuer: r.issuer,
  audience: r.audience,
  jwksUri: r.jwks_uri,
  jwks: r.jwks === null ? null : json(r.jwks),
  claims: json(r.claims),
  createdAt: new Date(r.created_at),
});

const COLUMNS = 'id, name, issuer, audience, jwks_uri, jwks, claims, created_at';

export async function insertWorkloadRule(
  q: Queryable,
  realmId: string,
  clientRowId: string,
  rule: WorkloadRule,
  now: Date,
): Promise<StoredWorkloadRule> {
  await q.query(
    `insert into workload_federations
       (realm_id, id, client_row_id, name, issuer, audience, jwks_uri, jwks, claims, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [
      realmId,
      rule.id,
      clientRowId,
      rule.name,
      rule.issuer,
      rule.audience,
      rule.jwksUri,
      rule.jwks === null ? null : JSON.stringify(rule.jwks),
      JSON.stringify(rule.claims),
      now,
    ],
  );
  return { ...rule, createdAt: now };
}

export async function listWorkloadRules(
  q: Queryable,
  realmId: string,
  clientRowId: string,
): Promise<StoredWorkloadRule[]> {
  const r = await q.query<RuleRow>(
    `select ${COLUMNS} from workload_federations where realm_id = $1 and client_row_id = $2 order by id`,
    [realmId, clientRowId],
  );
  return r.rows.map(ruleOf);
}

/** The rules of one client for one issuer: what an assertion of that issuer is judged against. */
export async function workloadRulesForIssuer(
  q: Queryable,
  realmId: string,
  clientRowId: string,
  issuer: string,
): Promise<StoredWorkloadRule[]> {
  const r = await q.query<RuleRow>(
    `select ${COLUMNS} from workload_federations
      where realm_id = $1 and client_row_id = $2 and issuer = $3 order by id`,
    [realmId, clientRowId, issuer],
  );
  return r.rows.map(ruleOf);
}

export async function deleteWorkloadRule(
  q: Queryable,
  realmId: string,
  clientRowId: string,
  id: string,
): Promise<StoredWorkloadRule | null> {
  const r = await q.query<RuleRow>(
    `delete from workload_federations where realm_id = $1 and client_row_id = $2 and id = $3
     returning ${COLUMNS}`,
    [realmId, clientRowId, id],
  );
  const row = r.rows[0];
  return row ? ruleOf(row) : null;
}
