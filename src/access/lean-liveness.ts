// The live checks of one token that needs no roles and no decision facts (introspection, UserInfo,
// the API bearers without roles), as a statement that names only the tables this token's shape can
// need and returns only the columns its judgement reads. PostgreSQL initialises every subplan of a
// statement and locks every table and index it names at each execution, and node-postgres builds
// the result's parsers from the row description of every call, so a session-less token never
// touches `sessions`, a user's never `service_principals`, a token without org_id never
// `organizations`, and so on. The checks themselves are live-check-sql.ts's, as in
// token-liveness.ts's statement; the texts are cached by shape (at most 2^10, in practice a handful).
// What the checks read of clients, resources, introspector registrations and signing keys is
// configuration: the process keeps it per token shape and key, tagged with realms.clients_revision
// (moved by trigger with every write to those tables, migrations/0024_clients_revision.sql), and a
// token with a kept copy runs the statement without those parts, reading the revision instead.
// When the revision has moved, the whole statement runs again, so a disabled client or resource, a
// removed introspector and a compromised signing key count from their commit as before.
import {
  type ClientAuthFacts,
  clientAuthFactsFrom,
  clientAuthFactsJsonOf,
  secretsAsOf,
} from '../clients/index.ts';
import { one, type Queryable } from '../platform/db/db.ts';
import { KeptCopies } from '../platform/kept-copies.ts';
import {
  type CheckFacts,
  type CheckParam,
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
import type { LivenessRow } from './liveness-judgement.ts';

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
  /** A JWT: its signing key must still be published. */
  key: boolean;
  /**
   * The configuration parts (client, resource, introspector, caller) come from a kept copy: the
   * statement reads the realm's clients_revision in their place.
   */
  kept: boolean;
}

export const isPrincipalId = (subject: string): boolean => subject.startsWith('spr_');

function shapeOf(f: CheckFacts): Shape {
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
    key: (f.keyId ?? null) !== null,
    kept: false,
  };
}

// The exchange check reads the token's client row, so those tokens always run the whole statement.
const keepable = (s: Shape): boolean => !s.exchangeGrant;

// Each member a bit, in declaration order (the statement texts are kept by this number).
const keyOf = (s: Shape): number => {
  let key = 0;
  for (const b of Object.values(s)) key = (key << 1) | (b ? 1 : 0);
  return key;
};

/** The statement of one shape: its text and the parameter names in `$n` order. */
interface Built {
  sql: string;
  names: CheckParam[];
}

function build(s: Shape): Built {
  const names: CheckParam[] = [];
  // A parameter is numbered where it is first used, so the statement names exactly the
  // parameters it has (PostgreSQL cannot type one it never sees).
  const p = (name: CheckParam): string => {
    let i = names.indexOf(name);
    if (i < 0) i = names.push(name) - 1;
    return `$${i + 1}`;
  };
  const realm = p('realm');
  // The resource the token is for: the registered row found by audience, or the id it names.
  const resourceId = (): string => (s.resource ? `coalesce(${p('resource')}, res.id)` : p('resource'));
  const cols = s.kept ? [] : ['c.state as client_state'];
  if (s.key && !s.kept) cols.push(`${keyLiveSql(p)} as key_live`);
  if (keepable(s))
    cols.push(`(select rl.clients_revision::text from realms rl where rl.id = ${realm}) as clients_revision`);
  if (s.principal) cols.push('sp.state as principal_state', 'sp.authz_version as principal_authz');
  else
    cols.push(
      'u.state as user_state',
      'u.authz_version as user_authz',
      'extract(epoch from ur.revoked_before)::float8 as revoked_before',
    );
  if (s.session)
    cols.push(
      `${sessionLiveSql(p)} as session_live`,
      's.mfa as session_mfa',
      's.recovery_restricted as session_restricted',
    );
  cols.push(`${jtiRevokedSql(p)} as jti_revoked`);
  if (s.userGrant) cols.push(`${userGrantSql(p)} as user_grant`);
  if (s.exchangeGrant) cols.push(`${exchangeGrantSql(p, resourceId())} as exchange_grant`);
  if (s.resource && !s.kept) cols.push('res.state as resource_state');
  if (s.org)
    cols.push(
      'org.state as org_state',
      s.principal
        ? 'case when org.id is not null then (sp.allowed_organization_ids is null or org.id = any (sp.allowed_organization_ids)) end as org_member'
        : `case when org.id is not null then ${orgMembershipSql(p)} end as org_member`,
    );
  if (s.introspector && !s.kept) {
    const introspector = s.caller ? `coalesce(${p('introspectorRow')}, cc.id)` : p('introspectorRow');
    cols.push(`${introspectorSql(p, resourceId(), introspector)} as introspector_allowed`);
  }
  if (s.caller && !s.kept)
    cols.push(`case when cc.id is not null then ${clientAuthFactsJsonOf('cc', p('now'))} end as caller`);
  if (s.support) cols.push(`${supportGrantSql(p)} as support`);

  // Every join is optional and by key, from a one-row base, so the statement answers one row
  // whatever is missing.
  const from = ['from (select 1) one'];
  if (!s.kept) from.push(`left join clients c on c.realm_id = ${realm} and c.client_id = ${p('client')}`);
  if (s.principal)
    from.push(`left join service_principals sp on sp.realm_id = ${realm} and sp.id = ${p('subject')}`);
  else
    from.push(
      `left join users u on u.realm_id = ${realm} and u.id = ${p('subject')}`,
      `left join user_revocations ur on ur.realm_id = ${realm} and ur.user_id = ${p('subject')}`,
    );
  if (s.session) from.push(`left join sessions s on s.realm_id = ${realm} and s.id = ${p('session')}`);
  if (s.resource && !s.kept)
    from.push(`left join resources res on res.realm_id = ${realm} and res.audience = ${p('audience')}`);
  if (s.caller && !s.kept)
    from.push(`left join clients cc on cc.realm_id = ${realm} and cc.client_id = ${p('callerClient')}`);
  if (s.org) from.push(`left join organizations org on org.realm_id = ${realm} and org.id = ${p('org')}`);
  return { sql: `select ${cols.join(',\n  ')}\n${from.join('\n')}`, names };
}

const built = new Map<number, Built>();

function statement(shape: Shape, f: CheckFacts, now: Date): { sql: string; values: unknown[] } {
  const key = keyOf(shape);
  let b = built.get(key);
  if (!b) {
    b = build(shape);
    built.set(key, b);
  }
  const values = checkValues(f, now);
  return { sql: b.sql, values: b.names.map((n) => values[n]) };
}

/** What the configuration parts answered, with the revision they were read at. */
interface KeptConfig {
  revision: string;
  row: Pick<LeanRow, 'client_state' | 'resource_state' | 'introspector_allowed' | 'key_live'>;
  caller: ClientAuthFacts | null;
}

/** A lean row: the columns of its shape, and the realm's clients_revision where the shape reads it. */
type LeanRow = Partial<LivenessRow> & { clients_revision?: string };

// Tokens' configuration parts this process holds, by everything those parts read.
const keptConfig = new KeptCopies<KeptConfig>(5000);

const configKeyOf = (f: CheckFacts): string =>
  [f.realmId, f.clientId, f.audience, f.resourceId, f.callerClientId, f.introspectorRowId, f.keyId].join(
    '\n',
  );

/** The lean statement's row, with the calling client (callerClientId) as authentication reads it. */
export interface LeanRead {
  row: LeanRow;
  caller: ClientAuthFacts | null;
}

/** Runs this token's live checks: with the kept configuration when its revision still holds. */
export async function readLean(q: Queryable, f: CheckFacts, now: Date): Promise<LeanRead> {
  const shape = shapeOf(f);
  const full = async (): Promise<LeanRead> => {
    const st = statement(shape, f, now);
    const row = await one<LeanRow>(q, st.sql, st.values);
    return { row, caller: clientAuthFactsFrom(row.caller) };
  };
  if (!keepable(shape)) return full();
  const key = configKeyOf(f);
  const copy = keptConfig.get(key);
  if (copy !== undefined) {
    const st = statement({ ...shape, kept: true }, f, now);
    const row = await one<LeanRow>(q, st.sql, st.values);
    if (row.clients_revision === copy.revision) {
      row.client_state = copy.row.client_state;
      row.resource_state = copy.row.resource_state;
      row.introspector_allowed = copy.row.introspector_allowed;
      row.key_live = copy.row.key_live;
      return { row, caller: secretsAsOf(copy.caller, now) };
    }
  }
  const read = await full();
  // An unknown caller is not kept: made-up client ids would push out the copies that serve.
  if (shape.caller && read.caller === null) return read;
  const { client_state, resource_state, introspector_allowed, key_live } = read.row;
  keptConfig.set(key, {
    revision: String(read.row.clients_revision),
    row: { client_state, resource_state, introspector_allowed, key_live },
    caller: read.caller,
  });
  return read;
}
