// How restore-reconcile re-applies each kind of revocation log record over a restored database
// (document 2, "Backup and restore" 2). Every statement only moves a row further towards revoked,
// so applying a record twice, or one the backup already holds, changes nothing.

import type { Tx } from '../platform/db/db.ts';
import { eraseAccount } from '../users/account-erasure.ts';
import type { LogRecord, RecordKind } from './revocation-log.ts';

type Fields = Record<string, unknown>;
const str = (r: Fields, name: string): string | null =>
  typeof r[name] === 'string' ? (r[name] as string) : null;
const at = (l: LogRecord): string => str(l.record, 'at') ?? l.logged_at;

/** Applies one record; answers how many rows it changed. */
type Apply = (tx: Tx, l: LogRecord, now: Date) => Promise<number>;

const count = async (p: Promise<{ rowCount: number }>): Promise<number> => (await p).rowCount;

const revokeJti: Apply = (tx, l) =>
  count(
    tx.query(
      `insert into token_revocations (realm_id, jti, reason, expires_at, created_at, kind)
       values ($1, $2, $3, $4, $5, $6) on conflict (realm_id, jti) do nothing`,
      [
        l.realm_id,
        str(l.record, 'jti'),
        str(l.record, 'reason') ?? 'restore',
        str(l.record, 'expires_at'),
        at(l),
        str(l.record, 'token_kind') === 'key' ? 'key' : 'token',
      ],
    ),
  );

const revocation: Apply = async (tx, l, now) => {
  const r = l.record;
  switch (r.target) {
    case 'jti':
      return revokeJti(tx, l, now);
    case 'user':
      return count(
        tx.query(
          `insert into user_revocations (realm_id, user_id, revoked_before) values ($1, $2, $3)
           on conflict (realm_id, user_id) do update
             set revoked_before = greatest(user_revocations.revoked_before, excluded.revoked_before)
           where user_revocations.revoked_before < excluded.revoked_before`,
          [l.realm_id, str(r, 'user_id'), str(r, 'revoked_before')],
        ),
      );
    case 'session':
      return count(
        tx.query(
          `update sessions set revoked_at = $3, revoked_reason = coalesce($4, 'restore')
            where realm_id = $1 and id = $2 and revoked_at is null`,
          [l.realm_id, str(r, 'session_id'), at(l), str(r, 'reason')],
        ),
      );
    case 'client':
      // Only the client's last logged state counts (see lastOnly): a disable re-enabled later stays undone.
      if (r.state !== 'disabled') return 0;
      return count(
        tx.query(
          `update clients set state = 'disabled' where realm_id = $1 and id = $2 and state <> 'disabled'`,
          [l.realm_id, str(r, 'client_row_id')],
        ),
      );
    default:
      return 0;
  }
};

const keyCompromised: Apply = async (tx, l, now) => {
  if (str(l.record, 'jti') !== null) return revokeJti(tx, l, now);
  return count(
    tx.query(
      `update signing_keys set state = 'compromised', compromised_at = coalesce(compromised_at, $3)
        where realm_id = $1 and kid = $2 and state <> 'compromised'`,
      [l.realm_id, str(l.record, 'kid'), at(l)],
    ),
  );
};

const userState: Apply = (tx, l) => {
  const state = str(l.record, 'state');
  // pending_deletion is carried in the log but not re-applied (document 2, Backup and restore 2).
  if (state !== 'suspended' && state !== 'locked') return Promise.resolve(0);
  return count(
    tx.query(
      `update users set state = $3, updated_at = $4 where realm_id = $1 and id = $2 and state not in ($3, 'deleted')`,
      [l.realm_id, str(l.record, 'user_id'), state, at(l)],
    ),
  );
};

const tombstone: Apply = async (tx, l, now) => {
  const userId = str(l.record, 'user_id');
  const live = await tx.query(`select 1 from users where realm_id = $1 and id = $2 and state <> 'deleted'`, [
    l.realm_id,
    userId,
  ]);
  if (live.rows.length === 0 || userId === null) return 0;
  await eraseAccount(tx, l.realm_id, userId, now);
  return 1;
};

const invitationConsumed: Apply = (tx, l) =>
  count(
    tx.query(
      `update memberships set state = $3, ended_reason = coalesce($4, ended_reason), updated_at = $5
        where realm_id = $1 and id = $2 and state in ('invited', 'pending_approval') and state <> $3`,
      [l.realm_id, str(l.record, 'membership_id'), str(l.record, 'state'), str(l.record, 'reason'), at(l)],
    ),
  );

const membershipState: Apply = async (tx, l) => {
  const state = str(l.record, 'state');
  if (state !== 'removed' && state !== 'suspended' && state !== 'expired') return 0;
  const id = str(l.record, 'membership_id');
  const n = await count(
    tx.query(
      `update memberships set state = $3, ended_reason = coalesce($4, ended_reason), updated_at = $5,
              authorization_revision = authorization_revision + 1
        where realm_id = $1 and id = $2 and state <> $3 and state not in ('removed', 'expired')`,
      [l.realm_id, id, state, str(l.record, 'reason'), at(l)],
    ),
  );
  if (state !== 'suspended')
    await tx.query('delete from role_assignments where realm_id = $1 and membership_id = $2', [
      l.realm_id,
      id,
    ]);
  return n;
};

const passwordChanged: Apply = async (tx, l) => {
  const userId = str(l.record, 'user_id');
  // The restored verifier is older than the change: the password it holds was replaced (or found
  // compromised) after the backup. Marked compromised, with update_password as the service does
  // for a compromised password, so it signs in to nothing but choosing a new one. An account
  // without a verifier at all gets update_password too.
  const marked = await count(
    tx.query(
      `update password_credentials set compromised = true
        where realm_id = $1 and user_id = $2 and not compromised and (created_at < $3 or $4)`,
      [l.realm_id, userId, at(l), l.record.compromised === true],
    ),
  );
  const required = await count(
    tx.query(
      `update users set required_actions = array_append(required_actions, 'update_password')
        where realm_id = $1 and id = $2 and state <> 'deleted' and not ('update_password' = any (required_actions))
          and not exists (select 1 from password_credentials p
                           where p.realm_id = $1 and p.user_id = $2 and not p.compromised)`,
      [l.realm_id, userId],
    ),
  );
  return Math.max(marked, required);
};

const clientCredentialRevoked: Apply = (tx, l) =>
  count(
    tx.query(
      'update client_secrets set revoked_at = $3 where realm_id = $1 and id = $2 and revoked_at is null',
      [l.realm_id, str(l.record, 'secret_id'), at(l)],
    ),
  );

const refreshRotated: Apply = (tx, l) =>
  count(
    tx.query(
      'update refresh_tokens set rotated_at = $3 where realm_id = $1 and token_digest = $2 and rotated_at is null',
      [l.realm_id, str(l.record, 'token_digest'), at(l)],
    ),
  );

const familyRevoked: Apply = (tx, l) =>
  count(
    tx.query(
      `update refresh_families set revoked_at = $3, revoked_reason = coalesce($4, 'restore')
        where realm_id = $1 and id = $2 and revoked_at is null`,
      [l.realm_id, str(l.record, 'family_id'), at(l), str(l.record, 'reason')],
    ),
  );

const grantRevoked: Apply = (tx, l) =>
  count(
    tx.query(
      `update oauth_grants set revoked_at = $3, revoked_reason = coalesce($4, 'restore')
        where realm_id = $1 and id = $2 and revoked_at is null`,
      [l.realm_id, str(l.record, 'grant_id'), at(l), str(l.record, 'reason')],
    ),
  );

const recoveryCodeConsumed: Apply = (tx, l) =>
  count(
    tx.query(
      `update recovery_codes set used_at = $4
        where realm_id = $1 and user_id = $2 and code_digest = $3 and used_at is null`,
      [l.realm_id, str(l.record, 'user_id'), str(l.record, 'code_digest'), at(l)],
    ),
  );

const recoveryCodesReplaced: Apply = (tx, l) =>
  count(
    tx.query(
      'delete from recovery_codes where realm_id = $1 and user_id = $2 and batch_id <> $3 and created_at < $4',
      [l.realm_id, str(l.record, 'user_id'), str(l.record, 'batch_id'), at(l)],
    ),
  );

const hotpCounter: Apply = (tx, l) =>
  count(
    tx.query(
      // Never lowered: a counter behind the log would accept codes already used.
      'update hotp_credentials set counter = $4 where realm_id = $1 and user_id = $2 and id = $3 and counter < $4',
      [l.realm_id, str(l.record, 'user_id'), str(l.record, 'credential_id'), Number(l.record.counter)],
    ),
  );

// Records naming something this version keeps nowhere: nothing to re-apply them to.
const notApplicable: Apply = () => Promise.resolve(0);

/**
 * An initial access token's count and revocation (migration 0039): the count is never lowered, so
 * uses spent after the backup stay spent, and a revocation stays.
 */
const initialAccessToken: Apply = (tx, l) =>
  count(
    tx.query(
      `update initial_access_tokens
          set uses = least(max_uses, greatest(uses, $3)),
              revoked_at = coalesce(revoked_at, $4::timestamptz)
        where realm_id = $1 and id = $2
          and (uses < least(max_uses, $3) or (revoked_at is null and $4::timestamptz is not null))`,
      [l.realm_id, str(l.record, 'token_id'), Number(l.record.uses ?? 0), str(l.record, 'revoked_at')],
    ),
  );

/**
 * A registration access token rotated (or ended) after the backup: the restored registration takes
 * the logged digest, so a token handed out before the failure works and older ones do not.
 */
const registrationTokenRotated: Apply = (tx, l) =>
  count(
    tx.query(
      `update client_registrations
          set registration_token_digest = $3, token_rotated_at = $4,
              status = case when $5::text in ('rejected', 'deleted') then $5::text else status end
        where realm_id = $1 and client_row_id = $2 and token_rotated_at <= $4
          and registration_token_digest is distinct from $3`,
      [
        l.realm_id,
        str(l.record, 'client_row_id'),
        str(l.record, 'token_digest'),
        at(l),
        str(l.record, 'status'),
      ],
    ),
  );

// The automation credentials whose revocation is logged, and the table each lives in: a SCIM
// connector (migration 0037) and an API key (migration 0038). Any other credential name is a
// record of a later version: nothing here to re-apply it to.
const AUTOMATION_CREDENTIAL_TABLES: Readonly<Record<string, string>> = {
  scim_connector: 'scim_connectors',
  api_key: 'api_keys',
};

/** A revoked automation credential stays revoked. */
const automationCredentialRevoked: Apply = (tx, l, now) => {
  const credential = str(l.record, 'credential');
  const table =
    credential !== null && Object.hasOwn(AUTOMATION_CREDENTIAL_TABLES, credential)
      ? AUTOMATION_CREDENTIAL_TABLES[credential]
      : undefined;
  if (table === undefined) return notApplicable(tx, l, now);
  return count(
    tx.query(`update ${table} set revoked_at = $3 where realm_id = $1 and id = $2 and revoked_at is null`, [
      l.realm_id,
      str(l.record, 'credential_id'),
      at(l),
    ]),
  );
};

export const APPLY: Record<RecordKind, Apply> = {
  revocation,
  tombstone,
  key_compromised: keyCompromised,
  user_state: userState,
  invitation_consumed: invitationConsumed,
  password_changed: passwordChanged,
  client_credential_revoked: clientCredentialRevoked,
  automation_credential_revoked: automationCredentialRevoked,
  membership_state: membershipState,
  refresh_rotated: refreshRotated,
  refresh_family_revoked: familyRevoked,
  grant_revoked: grantRevoked,
  recovery_code_consumed: recoveryCodeConsumed,
  recovery_codes_replaced: recoveryCodesReplaced,
  hotp_counter: hotpCounter,
  initial_access_token: initialAccessToken,
  registration_token_rotated: registrationTokenRotated,
};

/** The subject whose last record alone counts, for kinds that record states moving both ways. */
export function lastOnlyKey(l: LogRecord): string | null {
  if (l.kind === 'user_state') return `u ${l.realm_id} ${str(l.record, 'user_id')}`;
  if (l.kind === 'membership_state') return `m ${l.realm_id} ${str(l.record, 'membership_id')}`;
  if (l.kind === 'revocation' && l.record.target === 'client')
    return `c ${l.realm_id} ${str(l.record, 'client_row_id')}`;
  return null;
}
