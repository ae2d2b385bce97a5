// The live checks behind every online use of an access token: the service's own APIs, UserInfo,
// introspection and authorization decisions (spec doc 2, Revocation exposure). One SQL statement
// answers all of them, with whatever else a decision needs (roles, revisions, scopes), so an
// introspection or a decision costs one database round trip. No liveness fact is cached: only role
// definitions (role-definitions.ts) and, for lean checks, client configuration (lean-liveness.ts)
// are kept, each proved current by a revision the same statement reads. This file builds the
// statements of roles and decisions and of batches; liveness-judgement.ts says what a row means.

import { clientAuthFactsJsonOf } from '../clients/index.ts';
import { one, type Queryable } from '../platform/db/db.ts';
import { namedParams, type Placeholders } from '../platform/db/named-params.ts';
import { heldAssignmentsSql, type RoleHolding, subjectGroupsCte } from '../roles/effective-roles.ts';
import { liveMembershipSql } from '../roles/live-membership.ts';
import { heldRolesSql, knownRoleDefinitions, type RoleDefinitions } from '../roles/role-definitions.ts';
import { readLean } from './lean-liveness.ts';
import {
  checkValues,
  exchangeGrantSql,
  introspectorSql,
  jtiRevokedSql,
  keyLiveSql,
  orgMembershipSql,
  sessionLiveSql,
  supportGrantSql,
  userGrantSql,
} from './live-check-sql.ts';
import { judgeLiveness, type Liveness, type LivenessRow } from './liveness-judgement.ts';
import type { VerifiedAccessToken } from './verify-access-token.ts';

export type { DecisionFacts, Inactivity, Liveness, SupportFacts } from './liveness-judgement.ts';
export type { RoleHolding };

export interface TokenFacts {
  realmId: string;
  subject: string;
  clientId: string;
  tokenId: string;
  /** NumericDate seconds */
  issuedAt: number;
  sessionId: string | null;
  audience: string;
  /**
   * The resource id of the audience (builtin:<name> or res_…); null: the registered resource
   * whose audience is `audience`, found in the same statement (introspection).
   */
  resourceId: string | null;
  /** The token came from a token exchange (it has an act claim). */
  exchanged: boolean;
  /**
   * With exchanged: the token's grant_client_id, the client of the user's grant the exchange
   * derives from. That grant must be live as for a user token of that client; without the claim
   * an exchanged user token has no grant to find and is inactive.
   */
  grantClientId?: string | null;
  /** Also load the subject's roles (administration API): realm scope, and rolesOrgId's scope. */
  withRoles?: boolean;
  /** With withRoles: also the roles held inside this organization. */
  rolesOrgId?: string | null;
  /** With withRoles: also the roles held inside this project; its row comes back as `project`. */
  rolesProjectId?: string | null;
  /**
   * With withRoles: also the roles held inside each of these organizations and projects (a
   * decision batch asks about several at once); the holdings say their scope, the projects' rows
   * come back as `projects`. With decision (roles or not), the organizations of rolesOrgIds the
   * subject is live in come back as `liveOrgIds`.
   */
  rolesOrgIds?: readonly string[];
  rolesProjectIds?: readonly string[];
  /**
   * The token's org_id claim: the organization must be active and the user's membership in it
   * (or the service principal's permission to act in it) too.
   */
  orgId?: string | null;
  /** Introspection: the calling client's row id, answered as `introspectorAllowed`. */
  introspectorRowId?: string | null;
  /**
   * Introspection: the calling client's client_id. Its row and secrets come back as `caller`
   * (for client authentication in the same round trip), and it is the introspector checked
   * when introspectorRowId is not given.
   */
  callerClientId?: string | null;
  /** Authorization decisions: the facts they need besides liveness (DecisionFacts). */
  decision?: DecisionQuery | null;
  /**
   * The token's support_grant_id claim: it is live only while that grant is active and unexpired
   * for this subject, client, audience and organization (every grant names one), the support
   * user's account is active, and the resource still accepts support access through this client
   * (docs/support-access.md). It replaces the user-grant and exchange-grant checks.
   */
  supportGrantId?: string | null;
  /**
   * A JWT's kid: the key must still be published (doc 2, Revocation exposure: signature and key),
   * checked in the same statement, so a compromised key's tokens are inactive from the emergency
   * rotation's commit on every server. Null for opaque tokens.
   */
  keyId?: string | null;
}

/**
 * What a decision asks of the statement. With it, the realm's revisions and policy_engine member,
 * the token resource's scopes and the sensitivity of `actions` come back. `resourceTypes` that are
 * relationship types come back as `definedTypes`; when there is one, the subject's organization
 * memberships and groups come too, and every type of the realm unless the realm's authorization
 * revision is still `knownTypesRevision` (the caller's cache). Roles (withRoles) are computed
 * only when some resource type is not a relationship type.
 */
export interface DecisionQuery {
  actions: readonly string[];
  resourceTypes: readonly string[];
  knownTypesRevision: number | null;
  /**
   * The caller expects none of `resourceTypes` to be a relationship type: what only relationship
   * checks read (the types, memberOrgIds, groupIds, liveOrgIds, principalOrgIds) is left out of the
   * statement. `definedTypes` still says which asked types are relationship types, so a caller that
   * was wrong asks again.
   */
  rolesOnly?: boolean;
}

// The statement's parameters by name; `$n` is never written by hand.
const NAMES = [
  'realm',
  'subject',
  'client',
  'jti',
  'session',
  'audience',
  'resource',
  'now',
  'withRoles',
  'introspectorRow',
  'callerClient',
  'exchanged',
  'rolesOrg',
  'org',
  'rolesProject',
  'decision',
  'actions',
  'resourceTypes',
  'knownTypesRevision',
  'rolesOrgs',
  'rolesProjects',
  'supportGrant',
  'grantClient',
  'knownRoles',
  'key',
] as const;
type Name = (typeof NAMES)[number];

// Statements with the same columns, of three kinds: `lean` (introspection, most API bearers)
// computes no roles, projects or decision facts, `roles` (administration API callers, a decision's
// caller) adds roles and projects, `full` (a decision's subjects) everything. What a statement does
// not compute comes back as null, so PostgreSQL neither plans nor starts the subplans a token cannot
// need (executor start-up was most of an introspection's database CPU once the statement had grown).
type Kind = 'lean' | 'roles' | 'full';

const kindOf = (f: TokenFacts): Kind =>
  f.decision !== undefined && f.decision !== null
    ? 'full'
    : f.withRoles === true ||
        (f.rolesProjectId ?? null) !== null ||
        (f.rolesOrgIds?.length ?? 0) > 0 ||
        (f.rolesProjectIds?.length ?? 0) > 0
      ? 'roles'
      : 'lean';

/**
 * The parts of a roles or full statement a token can need. A part it cannot need is left out of the
 * statement's text (a row of nulls stands in for a table), so PostgreSQL neither locks its tables
 * nor starts its subplans; each combination is its own statement. The lean statement keeps every
 * part and tells tokens apart by its parameters alone.
 */
interface Parts {
  /** The subject's kind by its id's prefix; `either` reads both (a batch holding both kinds). */
  subject: 'user' | 'service_principal' | 'either';
  /** The token names a session. */
  session: boolean;
  /** The audience is a registered resource, whose row is read (not a built-in audience). */
  resource: boolean;
  /** An exchanged token without a support grant: its exchange grant is checked. */
  exchanged: boolean;
  /** The token's org_id claim. */
  org: boolean;
  support: boolean;
  /** Introspection's calling client and introspector. */
  introspection: boolean;
  /** The subject's roles (withRoles). */
  roles: boolean;
  /** Roles inside named organizations (and, for decisions, the subject's standing in them). */
  orgs: boolean;
  /** Named projects, and roles inside them. */
  projects: boolean;
  /** A decision's relationship facts (not DecisionQuery.rolesOnly). */
  relationships: boolean;
}

const EVERY_PART: Parts = {
  subject: 'either',
  session: true,
  resource: true,
  exchanged: true,
  org: true,
  support: true,
  introspection: true,
  roles: true,
  orgs: true,
  projects: true,
  relationships: true,
};

const given = (v: string | null | undefined): boolean => v !== undefined && v !== null;

function partsOf(f: TokenFacts): Parts {
  return {
    subject: f.subject.startsWith('spr_') ? 'service_principal' : 'user',
    session: f.sessionId !== null,
    resource: f.resourceId === null || f.resourceId.startsWith('res_'),
    exchanged: f.exchanged && !given(f.supportGrantId),
    org: given(f.orgId),
    support: given(f.supportGrantId),
    introspection: given(f.introspectorRowId) || given(f.callerClientId),
    roles: f.withRoles === true,
    orgs: given(f.rolesOrgId) || (f.rolesOrgIds?.length ?? 0) > 0,
    projects: given(f.rolesProjectId) || (f.rolesProjectIds?.length ?? 0) > 0,
    relationships: f.decision !== undefined && f.decision !== null && f.decision.rolesOnly !== true,
  };
}

/** The parts of either statement (so a batch's tokens of one kind share one statement). */
const unionOf = (a: Parts, b: Parts): Parts => ({
  subject: a.subject === b.subject ? a.subject : 'either',
  session: a.session || b.session,
  resource: a.resource || b.resource,
  exchanged: a.exchanged || b.exchanged,
  org: a.org || b.org,
  support: a.support || b.support,
  introspection: a.introspection || b.introspection,
  roles: a.roles || b.roles,
  orgs: a.orgs || b.orgs,
  projects: a.projects || b.projects,
  relationships: a.relationships || b.relationships,
});

// Every lookup is by primary or unique key; subqueries a token cannot need are skipped. Subject ids
// carry their kind as a prefix (platform/ids.ts), so a user token never probes service_principals
// and a service principal's never probes users or user_revocations (the prefix test sits inside a
// subquery, where PostgreSQL makes it a one-time filter in front of the index scan; in a left
// join's ON clause it would only filter after the scan). Likewise a token of a built-in audience
// (resource `builtin:...`: the administration and account APIs, UserInfo) has no resources row to
// look up. In a roles or full statement, a part the token cannot need (Parts) is not there at all.
function statement(p: Placeholders<Name>, kind: Kind, parts: Parts): string {
  const lean = kind === 'lean';
  const noDecision = kind !== 'full';
  const q = (n: Name) => p[n];
  const users = parts.subject !== 'service_principal';
  const principals = parts.subject !== 'user';
  const subjectType =
    parts.subject === 'either'
      ? "(case when u.id is not null then 'user' else 'service_principal' end)"
      : `'${parts.subject}'`;
  // A table a statement leaves out: one row of nulls under the same name, which PostgreSQL folds away.
  const absent = (alias: string, columns: string) => `cross join (select ${columns}) ${alias}`;
  return `
select c.state as client_state, c.id as client_row_id,
  case when ${p.key}::text is not null then ${keyLiveSql(q)} end as key_live,
  u.state as user_state, u.authz_version as user_authz,
  p.state as principal_state, p.authz_version as principal_authz,
  ${
    parts.session
      ? `${sessionLiveSql(q)} as session_live,
  s.mfa as session_mfa, s.recovery_restricted as session_restricted`
      : 'null::boolean as session_live, null::boolean as session_mfa, null::boolean as session_restricted'
  },
  extract(epoch from ur.revoked_before)::float8 as revoked_before,
  ${jtiRevokedSql(q)} as jti_revoked,
  case when u.id is not null and ${p.grantClient}::text is not null then ${userGrantSql(q)} end as user_grant,
  ${
    parts.exchanged
      ? `case when ${p.exchanged}::boolean and ${p.supportGrant}::text is null then ${exchangeGrantSql(q, `coalesce(${p.resource}, res.id)`)} end`
      : 'null::boolean'
  } as exchange_grant,
  res.state as resource_state,
  org.state as org_state,
  case when org.id is not null then (case when u.id is not null
    then ${orgMembershipSql(q)}
    else (p.allowed_organization_ids is null or org.id = any (p.allowed_organization_ids)) end)
  end as org_member,
  ${
    lean || !parts.projects
      ? 'null::json'
      : `case when ${p.rolesProject}::text is not null then (select json_build_object('id', pr.id, 'state', pr.state,
      'owner_organization_id', pr.owner_organization_id)
    from projects pr where pr.realm_id = ${p.realm} and pr.id = ${p.rolesProject}) end`
  } as project,
  ${
    lean || !parts.projects
      ? 'null::json'
      : `case when cardinality(${p.rolesProjects}::text[]) > 0 then (select json_agg(json_build_object('id', pr.id, 'state', pr.state,
      'owner_organization_id', pr.owner_organization_id))
    from projects pr where pr.realm_id = ${p.realm} and pr.id = any (${p.rolesProjects}::text[])) end`
  } as projects,
  ${
    parts.introspection
      ? `case when coalesce(${p.introspectorRow}, cc.id) is not null then ${introspectorSql(q, `coalesce(${p.resource}, res.id)`, `coalesce(${p.introspectorRow}, cc.id)`)} end`
      : 'null::boolean'
  } as introspector_allowed,
  ${parts.introspection ? `case when cc.id is not null then ${clientAuthFactsJsonOf('cc', p.now)} end` : 'null::json'} as caller,
  ${
    lean || !parts.roles
      ? 'null::json'
      : `case when ${p.withRoles}::boolean ${
          noDecision
            ? ''
            : `and (not ${p.decision}::boolean or exists (select 1 from unnest(${p.resourceTypes}::text[]) as q(n)
      where not (q.n = any (dt.names))))`
        }
    then ${heldRolesSql(
      p.realm,
      heldAssignmentsSql(
        {
          realmId: p.realm,
          subjectType,
          subjectId: p.subject,
          now: p.now,
          // One organization (administration API) and any number more (decisions).
          orgId: `any (array_append(${p.rolesOrgs}::text[], ${p.rolesOrg}::text))`,
          projectId: `any (array_append(${p.rolesProjects}::text[], ${p.rolesProject}::text))`,
        },
        { organization: parts.orgs, project: parts.projects },
      ),
      `${p.knownRoles}::bigint`,
      noDecision ? undefined : 'rl',
    )}
  end`
  } as roles,
  ${
    noDecision
      ? 'null::json'
      : `case when ${p.decision}::boolean and pv.realm_id is not null then json_build_object('policy_revision', rl.policy_revision,
      'authz_revision', rl.authz_revision, 'policy_engine', pv.policy -> 'policy_engine') end`
  } as realm_facts,
  ${noDecision ? 'null::jsonb' : `case when ${p.decision}::boolean then res.scopes end`} as resource_scopes,
  ${
    noDecision
      ? 'null::json'
      : `case when ${p.decision}::boolean and cardinality(${p.actions}::text[]) > 0 then (select json_object_agg(pm.name, pm.sensitivity)
    from permissions pm where pm.realm_id = ${p.realm} and pm.name = any (${p.actions}::text[])) end`
  } as sensitivities,
  ${noDecision ? 'null::text[]' : `case when ${p.decision}::boolean then dt.names end`} as defined_types,
  ${
    noDecision || !parts.relationships
      ? 'null::json'
      : `case when ${p.decision}::boolean and cardinality(dt.names) > 0
      and rl.authz_revision is distinct from ${p.knownTypesRevision}::bigint
    then (select json_object_agg(t.name, json_build_object('relations', t.relations, 'permissions', t.permissions))
      from authz_types t where t.realm_id = ${p.realm}) end`
  } as authz_types,
  ${
    noDecision || !parts.relationships
      ? 'null::text[]'
      : `case when ${p.decision}::boolean and u.id is not null and cardinality(dt.names) > 0
    then array(select m.organization_id from memberships m
      join organizations mo on mo.realm_id = ${p.realm} and mo.id = m.organization_id and mo.state = 'active'
     where m.realm_id = ${p.realm} and m.user_id = ${p.subject} and ${liveMembershipSql('m', p.now)}) end`
  } as member_org_ids,
  ${
    noDecision || !parts.relationships
      ? 'null::text[]'
      : `case when ${p.decision}::boolean and cardinality(dt.names) > 0
    then array(with recursive ${subjectGroupsCte(p.realm, subjectType, p.subject)}
    select distinct group_id from sg) end`
  } as group_ids,
  ${
    noDecision || !parts.orgs || !parts.relationships
      ? 'null::text[]'
      : `case when ${p.decision}::boolean and cardinality(${p.rolesOrgs}::text[]) > 0 then array(select lo.id from organizations lo
     where lo.realm_id = ${p.realm} and lo.id = any (${p.rolesOrgs}::text[]) and lo.state = 'active'
       and (case when u.id is not null
         then exists (select 1 from memberships m where m.realm_id = ${p.realm} and m.organization_id = lo.id
                       and m.user_id = ${p.subject} and ${liveMembershipSql('m', p.now)})
         else p.id is not null and (p.allowed_organization_ids is null or lo.id = any (p.allowed_organization_ids)) end))
  end`
  } as live_org_ids,
  ${
    noDecision || !parts.relationships
      ? 'null::json'
      : `case when ${p.decision}::boolean and u.id is null and p.id is not null
    then json_build_object('allowed', p.allowed_organization_ids) end`
  } as principal_orgs,
  ${
    parts.support
      ? `case when ${p.supportGrant}::text is not null then ${supportGrantSql(q)} end`
      : 'null::json'
  } as support
from (select 1) one
left join clients c on c.realm_id = ${p.realm} and c.client_id = ${p.client}
${
  !users
    ? absent('u', 'null::text as id, null::text as state, null::int as authz_version')
    : principals
      ? `left join (select * from users x where x.realm_id = ${p.realm} and x.id = ${p.subject} and ${p.subject} not like 'spr\\_%') u on true`
      : `left join users u on u.realm_id = ${p.realm} and u.id = ${p.subject}`
}
${
  !principals
    ? absent(
        'p',
        'null::text as id, null::text as state, null::int as authz_version, null::text[] as allowed_organization_ids',
      )
    : users
      ? `left join (select * from service_principals x where x.realm_id = ${p.realm} and x.id = ${p.subject} and ${p.subject} like 'spr\\_%') p on true`
      : `left join service_principals p on p.realm_id = ${p.realm} and p.id = ${p.subject}`
}
${parts.session ? `left join sessions s on s.realm_id = ${p.realm} and s.id = ${p.session}` : ''}
${
  !users
    ? absent('ur', 'null::timestamptz as revoked_before')
    : principals
      ? `left join (select * from user_revocations x where x.realm_id = ${p.realm} and x.user_id = ${p.subject} and ${p.subject} not like 'spr\\_%') ur on true`
      : `left join user_revocations ur on ur.realm_id = ${p.realm} and ur.user_id = ${p.subject}`
}
${
  parts.resource
    ? `left join (select * from resources x where x.realm_id = ${p.realm} and x.audience = ${p.audience}
  and (${p.resource}::text is null or ${p.resource}::text like 'res\\_%')) res on true`
    : absent('res', 'null::text as id, null::text as state, null::jsonb as scopes')
}
${parts.introspection ? `left join clients cc on cc.realm_id = ${p.realm} and cc.client_id = ${p.callerClient}` : ''}
${
  parts.org
    ? `left join organizations org on org.realm_id = ${p.realm} and org.id = ${p.org}`
    : absent('org', 'null::text as id, null::text as state')
}${
  // A decision reads the realm's row once, and the asked types that are relationship types once
  // (offset 0 keeps PostgreSQL from copying that subquery into every column that reads dt.names).
  noDecision
    ? ''
    : `
left join realms rl on rl.id = ${p.realm}
left join realm_policy_revisions pv on pv.realm_id = rl.id and pv.revision = rl.policy_revision
cross join (select array(select t.name from authz_types t
  where t.realm_id = ${p.realm} and t.name = any (${p.resourceTypes}::text[])) as names offset 0) dt`
}`;
}

interface Variant {
  kind: Kind;
  /** Tells the variants of this process apart (sqlForMany's key). */
  id: number;
  sql: string;
  count: number;
  values: (v: { readonly [k in Name]: unknown }) => unknown[];
}

function variant(kind: Kind, parts: Parts, id: number): Variant {
  // Written once with a marker per name, then numbered over the names the text uses: a statement
  // lists no parameter it does not use (PostgreSQL could not tell its type).
  const marker = (n: Name) => `\u00a7${n}\u00a7`;
  const text = statement(
    Object.fromEntries(NAMES.map((n) => [n, marker(n)])) as Placeholders<Name>,
    kind,
    parts,
  );
  const params = namedParams(NAMES.filter((n) => text.includes(marker(n))));
  const p = params.p as Placeholders<Name>;
  const sql = text.replace(/\u00a7(\w+)\u00a7/g, (_, n: Name) => p[n]);
  return { kind, id, sql, count: params.count, values: params.values as Variant['values'] };
}

// Built on first use; a process meets few combinations of parts.
const VARIANTS = new Map<string, Variant>();
function variantFor(kind: Kind, parts: Parts): Variant {
  const wanted = kind === 'lean' ? EVERY_PART : parts;
  const key = `${kind}:${JSON.stringify(wanted)}`;
  let v = VARIANTS.get(key);
  if (v === undefined) {
    v = variant(kind, wanted, VARIANTS.size);
    VARIANTS.set(key, v);
  }
  return v;
}

/** The variants of a batch: its tokens of one kind share the statement of all their parts. */
function variantsOf(facts: readonly TokenFacts[]): Variant[] {
  const kinds = facts.map(kindOf);
  const parts = facts.map(partsOf);
  const shared = new Map<Kind, Parts>();
  kinds.forEach((k, i) => {
    const had = shared.get(k);
    shared.set(k, had ? unionOf(had, parts[i] as Parts) : (parts[i] as Parts));
  });
  return kinds.map((k) => variantFor(k, shared.get(k) as Parts));
}

function paramsOf(f: TokenFacts, now: Date, v: Variant, known: RoleDefinitions | undefined): unknown[] {
  return v.values({
    ...checkValues(f, now),
    withRoles: f.withRoles ?? false,
    exchanged: f.exchanged,
    rolesOrg: f.rolesOrgId ?? null,
    rolesProject: f.rolesProjectId ?? null,
    decision: f.decision !== undefined && f.decision !== null,
    actions: f.decision?.actions ?? [],
    resourceTypes: f.decision?.resourceTypes ?? [],
    knownTypesRevision: f.decision?.knownTypesRevision ?? null,
    rolesOrgs: f.rolesOrgIds ?? [],
    rolesProjects: f.rolesProjectIds ?? [],
    knownRoles: known?.revision ?? null,
  });
}

/** The live-check facts a verified JWT access token gives, for the audience it was verified for. */
export function factsOfToken(
  realmId: string,
  t: VerifiedAccessToken,
  audience: string,
  resourceId: string | null,
): TokenFacts {
  return {
    realmId,
    subject: t.subject,
    clientId: t.clientId,
    tokenId: t.tokenId,
    issuedAt: t.issuedAt,
    sessionId: t.sessionId,
    audience,
    resourceId,
    exchanged: t.act !== null,
    grantClientId: t.grantClientId,
    orgId: t.orgId,
    keyId: t.kid,
  };
}

// The process's copy of the realm's role definitions, for a statement that reads roles: its
// revision is a parameter, and the holdings are expanded from it (role-definitions.ts).
const knownFor = (f: TokenFacts, v: Variant): RoleDefinitions | undefined =>
  v.kind === 'lean' ? undefined : knownRoleDefinitions(f.realmId);

export async function checkLiveness(q: Queryable, f: TokenFacts, now: Date): Promise<Liveness> {
  const kind = kindOf(f);
  if (kind === 'lean') {
    // The most frequent kind (introspection, UserInfo, API bearers) runs a statement cut to the
    // token's shape (lean-liveness.ts); the judgement reads a column it leaves out as null.
    const lean = await readLean(q, f, now);
    return judgeLiveness(f, lean.row, undefined, lean.caller);
  }
  const v = variantFor(kind, partsOf(f));
  const known = knownFor(f, v);
  return judgeLiveness(f, await one<LivenessRow>(q, v.sql, paramsOf(f, now, v, known)), known);
}

// The statement once per token (of the variant each needs: all have the same columns), joined
// with union all and the parameters renumbered, so a decision batch checks all its subject tokens
// in one round trip.
const manySql = new Map<string, string>();
function sqlForMany(variants: readonly Variant[]): string {
  const key = variants.map((v) => v.id).join(',');
  let text = manySql.get(key);
  if (text === undefined) {
    const parts: string[] = [];
    let offset = 0;
    variants.forEach((v, i) => {
      const at = offset;
      const renumbered = v.sql.replace(/\$(\d+)/g, (_, d: string) => `$${Number(d) + at}`);
      parts.push(renumbered.replace(/^\s*select /, `select ${i}::int as ord, `));
      offset += v.count;
    });
    // The rows are put in order here, not by the statement: no sort to start in PostgreSQL.
    text = parts.map((p) => `(${p})`).join(' union all ');
    if (manySql.size < 128) manySql.set(key, text);
  }
  return text;
}

/** checkLiveness for several tokens in one statement; answers in the order given. */
export async function checkLivenessMany(
  q: Queryable,
  facts: readonly TokenFacts[],
  now: Date,
): Promise<Liveness[]> {
  if (facts.length === 0) return [];
  if (facts.length === 1) return [await checkLiveness(q, facts[0] as TokenFacts, now)];
  const variants = variantsOf(facts);
  const known = facts.map((f, i) => knownFor(f, variants[i] as Variant));
  const rows = (
    await q.query<LivenessRow>(
      sqlForMany(variants),
      facts.flatMap((f, i) => paramsOf(f, now, variants[i] as Variant, known[i])),
    )
  ).rows;
  if (rows.length !== facts.length) throw new Error(`expected ${facts.length} rows, got ${rows.length}`);
  const inOrder: LivenessRow[] = [];
  for (const r of rows) inOrder[Number(r.ord)] = r;
  return facts.map((f, i) => judgeLiveness(f, inOrder[i] as LivenessRow, known[i]));
}
