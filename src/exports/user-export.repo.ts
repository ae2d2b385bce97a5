// The reads behind the personal data export (spec doc 2, Personal data export): one account's own
// records, named columns only (no verifier, seed, digest or sealed secret is ever selected).
import type { Queryable } from '../platform/db/db.ts';

type Row = Record<string, unknown>;

const rows = async (q: Queryable, sql: string, params: unknown[]): Promise<Row[]> =>
  (await q.query<Row>(sql, params)).rows;

export const exportAccount = async (q: Queryable, realmId: string, userId: string): Promise<Row | null> =>
  (
    await rows(
      q,
      `select id, state, display_name, attributes, required_actions, created_via, last_login_at,
              created_at, updated_at
         from users where realm_id = $1 and id = $2 and state <> 'deleted'`,
      [realmId, userId],
    )
  )[0] ?? null;

export const exportOwnIdentifiers = (q: Queryable, realmId: string, userId: string) =>
  rows(
    q,
    `select type, value, verified, is_primary from user_identifiers
      where realm_id = $1 and user_id = $2 order by id`,
    [realmId, userId],
  );

export const exportOwnMemberships = (q: Queryable, realmId: string, userId: string) =>
  rows(
    q,
    `select m.id, m.organization_id, o.display_name as organization_name, m.state, m.joined_at,
            m.expires_at, m.created_at
       from memberships m join organizations o on o.realm_id = m.realm_id and o.id = m.organization_id
      where m.realm_id = $1 and m.user_id = $2 order by m.id`,
    [realmId, userId],
  );

/** Which credentials the account has and when each was set up; recovery codes as a count left. */
export const exportCredentialMetadata = (q: Queryable, realmId: string, userId: string) =>
  rows(
    q,
    `select 'password' as type, created_at, null::bigint as remaining
       from password_credentials where realm_id = $1 and user_id = $2
     union all select 'totp', created_at, null from totp_credentials where realm_id = $1 and user_id = $2
     union all select 'hotp', created_at, null from hotp_credentials where realm_id = $1 and user_id = $2
     union all select 'recovery_codes', min(created_at), count(*) filter (where used_at is null)
       from recovery_codes where realm_id = $1 and user_id = $2 having count(*) > 0`,
    [realmId, userId],
  );

/** The account's passkeys by name and dates: never the credential id or public key. */
export const exportPasskeys = (q: Queryable, realmId: string, userId: string) =>
  rows(
    q,
    `select name, created_at, last_used_at from webauthn_credentials
      where realm_id = $1 and user_id = $2 order by created_at, id`,
    [realmId, userId],
  );

export const exportActiveSessions = (q: Queryable, realmId: string, userId: string, now: Date) =>
  rows(
    q,
    `select id, created_at, last_seen_at, auth_time, amr, acr, user_agent, client_id, idle_expires_at,
            absolute_expires_at
       from sessions
      where realm_id = $1 and user_id = $2 and revoked_at is null
        and idle_expires_at > $3 and absolute_expires_at > $3
      order by created_at desc, id`,
    [realmId, userId, now],
  );

export const exportConsents = (q: Queryable, realmId: string, userId: string) =>
  rows(
    q,
    `select client_id, scopes, created_at, updated_at from consents
      where realm_id = $1 and user_id = $2 order by client_id`,
    [realmId, userId],
  );

export const exportTermsAcceptances = (q: Queryable, realmId: string, userId: string) =>
  rows(
    q,
    `select version, accepted_at from terms_acceptances
      where realm_id = $1 and user_id = $2 order by accepted_at desc, version`,
    [realmId, userId],
  );

/** The newest security and identity audit records about the account, or by it. */
export const exportSecurityEvents = (q: Queryable, realmId: string, userId: string, limit: number) =>
  rows(
    q,
    `select id, type, category, outcome, occurred_at, actor_type, reason from audit_events
      where realm_id = $1 and category in ('security', 'identity')
        and (subject_id = $2 or target_id = $2 or (actor_type = 'user' and actor_id = $2))
      order by id desc limit ${limit}`,
    [realmId, userId],
  );

/** Imported historical audit records about the user, newest first (spec doc 2, Personal data export). */
export const exportImportedAuditRecords = (q: Queryable, realmId: string, userId: string, limit: number) =>
  rows(
    q,
    `select source_system, event_type, occurred_at, outcome from imported_audit_events
      where realm_id = $1 and user_id = $2 order by occurred_at desc, id desc limit ${limit}`,
    [realmId, userId],
  );

/** The upstream identities linked to the account, with the connection each came through. */
export const exportLinkedIdentities = (q: Queryable, realmId: string, userId: string) =>
  rows(
    q,
    `select l.id, l.provider_id, p.alias as provider_alias, p.display_name as provider_name, l.upstream_issuer,
            l.upstream_subject, l.upstream_email, l.provenance, l.created_at, l.last_used_at
       from linked_identities l join identity_providers p on p.realm_id = l.realm_id and p.id = l.provider_id
      where l.realm_id = $1 and l.user_id = $2 order by l.created_at, l.id`,
    [realmId, userId],
  );
