// Refusing a password that comes back (spec doc 1, realm policy member `password`, history_count):
// the self-service change, the required action update_password and a self-service reset all
// refuse the account's current password, and the earlier ones the policy keeps. The answer is the
// 422 validation problem with `password_reused` on `new_password`, as every path already used.
import type { Queryable, Tx } from '../platform/db/db.ts';
import { Problem } from '../platform/http/problem.ts';
import { policyValue, type RealmPolicy } from '../realms/index.ts';
import type { PasswordHasher, PasswordVerifier } from './password-hasher.ts';
import { pushPasswordHistory, recentPasswords } from './password-history.repo.ts';
import { findPasswordVerifier } from './users.repo.ts';

/** The most earlier passwords a realm may keep (policy check bound of history_count). */
const MOST_KEPT = 24;

/**
 * How many passwords, the current one included, may not be set again: history_count, and never
 * fewer than one, since setting the current password again changes nothing the person meant to.
 */
export function passwordsRefused(policy: RealmPolicy): number {
  const v = policyValue(policy, 'password', 'history_count');
  return typeof v === 'number' && Number.isInteger(v) && v > 1 ? Math.min(v, MOST_KEPT) : 1;
}

export const passwordReused = (refused: number) =>
  new Problem(
    422,
    'validation_failed',
    refused > 1
      ? `the current password and the ${refused - 1} before it cannot be set again`
      : 'the new password is the current one',
    { errors: [{ field: 'new_password', code: 'password_reused' }] },
  );

/**
 * Throws the reuse problem when `candidate` matches the current verifier or one of the kept
 * earlier ones. Runs the slow hash checks, so call it before a row lock is taken.
 */
export async function refuseReusedPassword(
  q: Queryable,
  hasher: PasswordHasher,
  who: { realmId: string; userId: string },
  candidate: string,
  refused: number,
  current?: PasswordVerifier | null,
): Promise<void> {
  const now = current === undefined ? await findPasswordVerifier(q, who.realmId, who.userId) : current;
  const earlier = await recentPasswords(q, who.realmId, who.userId, refused - 1);
  for (const v of now ? [now, ...earlier] : earlier) {
    if (await hasher.verify(candidate, v)) throw passwordReused(refused);
  }
}

/** Keeps the password being replaced among the earlier ones, when the policy keeps any. */
export async function keepReplacedPassword(
  tx: Tx,
  who: { realmId: string; userId: string },
  refused: number,
  now: Date,
): Promise<void> {
  if (refused <= 1) return;
  const current = await findPasswordVerifier(tx, who.realmId, who.userId);
  if (current) await pushPasswordHistory(tx, who.realmId, who.userId, current, refused - 1, now);
}
