// Worker task users.lifecycle (spec doc 1, Account states): a pending_verification account older
// than lifecycle.unverified_account_ttl_hours (72) and a guest without a sign-in within
// lifecycle.guest_ttl_days (30) are erased, with audit reasons unverified_registration_expired and
// guest_expired and the event user.deleted.
import { recorder } from '../audit/index.ts';
import type { TaskReport } from '../kernel/task.ts';
import type { Db } from '../platform/db/db.ts';
import { endAccountSessions } from '../sessions/index.ts';
import { eraseAccount } from './account-erasure.ts';

const BATCH = 200;

// Numbers outside the policy's ranges fall back to the defaults (the policy API validates them).
const EXPIRED = `
  with p as (
    select r.id as realm_id,
           case when (v.policy #>> '{lifecycle,unverified_account_ttl_hours}') ~ '^[0-9]{1,6}$'
                then (v.policy #>> '{lifecycle,unverified_account_ttl_hours}')::int else 72 end as unverified_hours,
           case when (v.policy #>> '{lifecycle,guest_ttl_days}') ~ '^[0-9]{1,4}$'
                then least((v.policy #>> '{lifecycle,guest_ttl_days}')::int, 3650) else 30 end as guest_days
      from realms r join realm_policy_revisions v on v.realm_id = r.id and v.revision = r.policy_revision)
  select u.realm_id, u.id,
         case when u.state = 'pending_verification' then 'unverified_registration_expired' else 'guest_expired' end as reason
    from users u join p on p.realm_id = u.realm_id
   where (u.state = 'pending_verification' and u.created_at < $1::timestamptz - make_interval(hours => p.unverified_hours))
      or (u.is_guest and u.state = 'active'
          and coalesce(u.last_login_at, u.created_at) < $1::timestamptz - make_interval(days => p.guest_days))
   limit ${BATCH}`;

export async function expireAccounts(deps: { db: Db }, now: Date): Promise<TaskReport> {
  const due = await deps.db.query<{ realm_id: string; id: string; reason: string }>(EXPIRED, [now]);
  let erased = 0;
  for (const u of due.rows) {
    await deps.db.tx(async (tx) => {
      const call = {
        realmId: u.realm_id,
        actor: { type: 'system' as const, id: null },
        correlationId: null,
        now,
      };
      await endAccountSessions(tx, u.realm_id, u.id, 'user_deleted', now, `lifecycle-${u.id}`);
      await eraseAccount(tx, u.realm_id, u.id, now);
      const record = recorder(tx, call);
      await record.audit('user.deleted', {
        category: 'identity',
        subject: { type: 'user', id: u.id },
        reason: u.reason,
        data: { reason: u.reason },
      });
      await record.event('user.deleted', { user_id: u.id });
      erased++;
    });
  }
  return { erased };
}
