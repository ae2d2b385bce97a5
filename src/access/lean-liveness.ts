// The live checks of one token that needs no roles and no decision facts (introspection, UserInfo,
// the API bearers without roles), as a statement that names only the tables this token's shape can
// need and returns only the columns its judgement reads. PostgreSQL initialises every subplan of a
// statement and locks every table and index it names at each execution, and node-postgres builds
// the result's parsers from the row description of every call, so a session-less token never
// touches `sessions`, a user's never `service_principals`, a token without org_id never
// `organizations`, and so on. The checks themselves are those of token-liveness.ts's statement;
// the texts are cached by shape (at most 2^9, in practice a handful).
import { clientAuthFactsJsonOf } from '../clients/index.ts';
import { liveMembershipSql } from '../roles/live-membership.ts';
import { liveSessionSql } from '../sessions/index.ts';

/** What the statement reads of token-liveness.ts's TokenFacts (there, each member is explained). */
export interface LeanFacts {
  realmId: string;
  subject: string;
  clientId: string;
  tokenId: string;
  sessionId: string | null;
  audience: string;
  resourceId: string | null;
  exchanged: boolean;
  grantClientId?: string | null;
  orgId?: string | null;
  introspectorRowId?: string | null;
  callerClientId?: string | null;
  supportGrantId?: string | null;
}

/** Which parts of the live checks a token needs. */
interface Shape {
  principal: boolean;
  session: boolean;
  org: boolean;
  /** A registered resource (res_...) to find by audience; built-in audiences have no row. */
  resource: boolean;
  userGrant: boolean;
  exchangeGrant: boolean;
  support: boolean;
  introspector: boolean;
  caller: boolean;
}

export type LeanName =
  | 'realm'
  | 'subject'
  | 'client'
  | 'jti'
  | 'session'
  | 'audience'
  | 'resource'
  | 'now'
  | 'introspectorRow'
  | 'callerClient'
  | 'org'
  | 'supportGrant'
  | 'grantClient';

export const isPrincipalId = (subject: string): boolean => subject.startsWith('spr_');

function shapeOf(f: LeanFacts): Shape {
  const principal = isPrincipalId(f.subject);
  const support = (f.supportGrantId ?? null) !== null;
  const grantClient = f.exchanged ? (f.grantClientId ?? null) : f.clientId;
  return {
    principal,
    session: f.sessionId !== null,
    org: (f.orgId ?? null) !== null,
    resource: f.resourceId === null || f.resourceId.startsWith('res_'),
    userGrant: !principal && !support && grantClient !== null,
    exchangeGrant: f.exchanged && !support,
    support,
    introspector: (f.introspectorRowId ?? null) !== null || (f.callerClientId ?? null) !== null,
    caller: (f.callerClientId ?? null) !== null,
  };
}

const keyOf = (s: Shape): string =>
  Object.values(s)
    .map((b) => (b ? '1' : '0'))
    .join('');

function parameterValue(f: LeanFacts, name: LeanName, now: Date): unknown {
  switch (name) {
    case 'realm':
      return f.realmId;
    case 'subject':
      return f.subject;
    case 'client':
      return f.clientId;
    case 'jti':
      return f.tokenId;
    case 'session':
      return f.sessionId;
    case 'audience':
      return f.audience;
    case 'resource':
      return f.resourceId;
    case 'now':
      return now;
    case 'introspectorRow':
      return f.introspectorRowId ?? null;
    case 'callerClient':
      return f.callerClientId ?? null;
    case 'org':
      return f.orgId ?? null;
    case 'supportGrant':
      return f.supportGrantId ?? null;
    case 'grantClient':
      // After an exchange, the grant of the client the subject token was issued to.
      return f.exchanged ? (f.grantClientId ?? null) : f.clientId;
  }
}

/**
 * The support grant a token acts under, as JSON with `live` and what the answer shows
 * (docs/support-access.md); `p` names the parameters realm, now, subject, client, org, audience
 * and supportGrant.
 */
export function supportGrantSql(p: (name: LeanName) => string): string {
  return `(select json_build_object('live',
      sx.state = 'active' and sx.expires_at > ${p('now')} and sx.target_user_id = ${p('subject')} and sx.client_id = ${p('client')}
        and sx.organization_id = ${p('org')}::text and sr.audience = ${p('audience')}
        and sr.impersonation_enabled and sr.verification_mode = 'strict_online'
        and coalesce(sr.impersonation_policy -> 'supportClientIds', '[]'::jsonb) @> to_jsonb(sx.client_id)
        and su.state = 'active',
      'actor_user_id', sx.actor_user_id, 'write', sx.write,
      'impersonation_enabled', sr.impersonation_enabled, 'policy', sr.impersonation_policy)
    from support_grants sx join resources sr on sr.realm_id = sx.realm_id and sr.id = sx.resource_id
      join users su on su.realm_id = sx.realm_id and su.id = sx.actor_user_id
    where sx.realm_id = ${p('realm')} and sx.id = ${p('supportGrant')})`;
}

/** The statement of one shape: its text and the parameter names in `$n` order. */
interface Built {
  sql: string;
  names: LeanName[];
}

function build(s: Shape): Built {
  const names: LeanName[] = [];
  // A parameter is numbered where it is first used, so the statement names exactly the
  // parameters it has (PostgreSQL cannot type one it never sees).
  const p = (name: LeanName): string => {
    let i = names.indexOf(name);
    if (i < 0) i = names.push(name) - 1;
    return `$${i + 1}`;
  };
  const realm = p('realm');
  // The resource the token is for: the registered row found by audience, or the id it names.
  const resourceId = (): string => (s.resource ? `coalesce(${p('resource')}, res.id)` : p('resource'));
  const cols = ['c.state as client_state'];
  if (s.principal) cols.push('sp.state as principal_state', 'sp.authz_version as principal_authz');
  else
    cols.push(
      'u.state as user_state',
      'u.authz_version as user_authz',
      'extract(epoch from ur.revoked_before)::float8 as revoked_before',
    );
  if (s.session)
    cols.push(
      `(s.user_id = ${p('subject')} and ${liveSessionSql('s', p('now'))}) as session_live`,
      's.mfa as session_mfa',
      's.recovery_restricted as session_restricted',
    );
  cols.push(
    `exists (select 1 from token_revocations t where t.realm_id = ${realm} and t.jti = ${p('jti')}) as jti_revoked`,
  );
  if (s.userGrant)
    cols.push(`exists (select 1 from oauth_grants g
     where g.realm_id = ${realm} and g.user_id = ${p('subject')} and g.client_id = ${p('grantClient')}
       and g.revoked_at is null and g.org_id is not distinct from ${p('org')}::text) as user_grant`);
  if (s.exchangeGrant)
    cols.push(`exists (select 1 from client_resource_grants x
     where x.realm_id = ${realm} and x.client_row_id = c.id and x.resource_id = ${resourceId()}) as exchange_grant`);
  if (s.resource) cols.push('res.state as resource_state');
  if (s.org)
    cols.push(
      'org.state as org_state',
      s.principal
        ? 'case when org.id is not null then (sp.allowed_organization_ids is null or org.id = any (sp.allowed_organization_ids)) end as org_member'
        : `case when org.id is not null then exists (select 1 from memberships m where m.realm_id = ${realm}
       and m.organization_id = org.id and m.user_id = ${p('subject')} and ${liveMembershipSql('m', p('now'))}) end as org_member`,
    );
  if (s.introspector) {
    const introspector = s.caller ? `coalesce(${p('introspectorRow')}, cc.id)` : p('introspectorRow');
    cols.push(`exists (select 1 from resource_introspectors i where i.realm_id = ${realm}
     and i.resource_id = ${resourceId()} and i.client_row_id = ${introspector}) as introspector_allowed`);
  }
  if (s.caller)
    cols.push(`case when cc.id is not null then ${clientAuthFactsJsonOf('cc', p('now'))} end as caller`);
  if (s.support) cols.push(`${supportGrantSql(p)} as support`);

  // Every join is optional and by key, from a one-row base, so the statement answers one row
  // whatever is missing.
  const from = [
    'from (select 1) one',
    `left join clients c on c.realm_id = ${realm} and c.client_id = ${p('client')}`,
  ];
  if (s.principal)
    from.push(`left join service_principals sp on sp.realm_id = ${realm} and sp.id = ${p('subject')}`);
  else
    from.push(
      `left join users u on u.realm_id = ${realm} and u.id = ${p('subject')}`,
      `left join user_revocations ur on ur.realm_id = ${realm} and ur.user_id = ${p('subject')}`,
    );
  if (s.session) from.push(`left join sessions s on s.realm_id = ${realm} and s.id = ${p('session')}`);
  if (s.resource)
    from.push(`left join resources res on res.realm_id = ${realm} and res.audience = ${p('audience')}`);
  if (s.caller)
    from.push(`left join clients cc on cc.realm_id = ${realm} and cc.client_id = ${p('callerClient')}`);
  if (s.org) from.push(`left join organizations org on org.realm_id = ${realm} and org.id = ${p('org')}`);
  return { sql: `select ${cols.join(',\n  ')}\n${from.join('\n')}`, names };
}

const built = new Map<string, Built>();

/** The statement for this token's live checks, and its values. */
export function leanStatement(f: LeanFacts, now: Date): { sql: string; values: unknown[] } {
  const shape = shapeOf(f);
  const key = keyOf(shape);
  let b = built.get(key);
  if (!b) {
    b = build(shape);
    built.set(key, b);
  }
  return { sql: b.sql, values: b.names.map((n) => parameterValue(f, n, now)) };
}
