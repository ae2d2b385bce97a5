// The four lifecycle rules (document 2 "Lifecycle rules"; document 1 "Account states" and the
// `lifecycle` policy section): which accounts each rule selects, as one SQL condition that serves
// the worker's selection, its re-check of one locked account, and GET /lifecycle/preview.
import type { Queryable } from '../platform/db/db.ts';
import { currentPolicy, policyValue } from '../realms/index.ts';

export type LifecycleRuleName = 'unverified_expired' | 'dormant' | 'guest_expired' | 'scheduled_deactivation';
export type LifecycleAction = 'delete' | 'report' | 'suspend';

/** Document 1, Limits: "Lifecycle job", accounts per rule per realm per run. */
export const LIFECYCLE_BATCH = 100;

export interface LifecycleSettings {
  unverifiedHours: number;
  guestDays: number;
  /** 0 turns the dormant rule off. */
  dormantDays: number;
  dormantAction: 'report' | 'suspend';
}

/** Policy values outside the policy's ranges fall back to the defaults (PUT /settings checks them). */
function whole(v: unknown, min: number, max: number, fallback: number): number {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : fallback;
}

export async function lifecycleSettings(q: Queryable, realmId: string): Promise<LifecycleSettings> {
  const policy = await currentPolicy(q, realmId);
  const value = (member: string) => policyValue(policy, 'lifecycle', member);
  return {
    unverifiedHours: whole(value('unverified_account_ttl_hours'), 1, 8760, 72),
    guestDays: whole(value('guest_ttl_days'), 1, 3650, 30),
    dormantDays: whole(value('dormant_days'), 0, 3650, 0),
    dormantAction: value('dormant_action') === 'suspend' ? 'suspend' : 'report',
  };
}

export interface LifecycleRule {
  name: LifecycleRuleName;
  action(s: LifecycleSettings): LifecycleAction;
  /** The audit reason of the change. */
  reason: string;
  /**
   * The condition on `u` (a users row of realm $1) at instant $2, with $3 the rule's own number;
   * null when the rule is off for the realm.
   */
  where: string;
  parameter(s: LifecycleSettings): number | null;
}

// Without a sign-in, an account's last activity is its creation.
const LAST_SEEN = 'coalesce(u.last_login_at, u.created_at)';

export const LIFECYCLE_RULES: readonly LifecycleRule[] = [
  {
    name: 'unverified_expired',
    action: () => 'delete',
    reason: 'unverified_registration_expired',
    where: `u.state = 'pending_verification'
            and u.created_at < $2::timestamptz - make_interval(hours => $3::int)`,
    parameter: (s) => s.unverifiedHours,
  },
  {
    name: 'dormant',
    action: (s) => s.dormantAction,
    reason: 'dormant',
    // A flag set before the last sign-in belongs to an earlier dormancy: this one is not flagged yet.
    where: `u.state = 'active' and not u.protected and not u.is_guest
            and ${LAST_SEEN} < $2::timestamptz - make_interval(days => $3::int)
            and (u.dormant_flagged_at is null or u.dormant_flagged_at < ${LAST_SEEN})`,
    parameter: (s) => (s.dormantDays === 0 ? null : s.dormantDays),
  },
  {
    name: 'guest_expired',
    action: () => 'delete',
    reason: 'guest_expired',
    where: `u.is_guest and u.state = 'active'
            and ${LAST_SEEN} < $2::timestamptz - make_interval(days => $3::int)`,
    parameter: (s) => s.guestDays,
  },
  {
    name: 'scheduled_deactivation',
    action: () => 'suspend',
    reason: 'scheduled_deactivation',
    // $3 is unused here; it is bound as an integer so every rule takes the same parameters.
    where: `u.state = 'active' and u.deactivate_at <= $2::timestamptz and $3::int = 0`,
    parameter: () => 0,
  },
];

/** Up to `limit` accounts the rule selects now, oldest id first. */
export async function dueAccounts(
  q: Queryable,
  realmId: string,
  rule: LifecycleRule,
  settings: LifecycleSettings,
  now: Date,
  limit: number,
): Promise<string[]> {
  const p = rule.parameter(settings);
  if (p === null) return [];
  const r = await q.query<{ id: string }>(
    `select u.id from users u where u.realm_id = $1 and ${rule.where} order by u.id limit $4`,
    [realmId, now, p, limit],
  );
  return r.rows.map((row) => row.id);
}

/** How many accounts the rule selects now (the preview's `due`). */
export async function countDue(
  q: Queryable,
  realmId: string,
  rule: LifecycleRule,
  settings: LifecycleSettings,
  now: Date,
): Promise<number> {
  const p = rule.parameter(settings);
  if (p === null) return 0;
  const r = await q.query<{ n: string }>(
    `select count(*) as n from users u where u.realm_id = $1 and ${rule.where}`,
    [realmId, now, p],
  );
  return Number(r.rows[0]?.n ?? 0);
}

/** Locks the account and answers whether the rule still selects it (the per-account re-check). */
export async function lockIfStillDue(
  q: Queryable,
  realmId: string,
  userId: string,
  rule: LifecycleRule,
  settings: LifecycleSettings,
  now: Date,
): Promise<boolean> {
  const p = rule.parameter(settings);
  if (p === null) return false;
  const r = await q.query(
    `select u.id from users u where u.realm_id = $1 and u.id = $4 and ${rule.where} for update`,
    [realmId, now, p, userId],
  );
  return r.rows.length === 1;
}
