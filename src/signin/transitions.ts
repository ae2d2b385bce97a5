// Status changes of a sign-in transaction (spec doc 1, "States and transitions: Sign-in transaction").
//
//   pending --last required action done--> completed   (code issued, redirect_to set)
//   pending --cancel--------------------> cancelled    (redirect_to carries an error)
//   pending --failure budget spent------> failed       (error too_many_failures)
//   pending --policy denial-------------> failed       (error access_denied)
//   pending --expires_at passes---------> expired
//
// Every function checks the current status first; anything but pending is a conflict.
import { Problem } from '../platform/http/problem.ts';
import { FAILURE_BUDGET, type Factor, type FailureCode, type SigninTx } from './transaction.ts';

export function ensurePending(t: SigninTx): void {
  if (t.status !== 'pending') {
    throw new Problem(409, 'conflict', `the transaction is ${t.status}`, { transaction_status: t.status });
  }
}

export const isExpired = (t: SigninTx, now: Date): boolean =>
  t.status === 'pending' && now.getTime() >= t.expiresAt.getTime();

export function expire(t: SigninTx): SigninTx {
  return { ...t, status: 'expired' };
}

export function withFactor(t: SigninTx, f: Factor): SigninTx {
  ensurePending(t);
  return t.completedFactors.includes(f) ? t : { ...t, completedFactors: [...t.completedFactors, f] };
}

/** A failed proof spends budget; the last allowed failure ends the transaction. */
export function withFailure(t: SigninTx): SigninTx {
  ensurePending(t);
  const failures = t.failures + 1;
  if (failures < FAILURE_BUDGET) return { ...t, failures };
  return fail({ ...t, failures }, 'too_many_failures');
}

// Failed and cancelled transactions get their error redirect from the engine once the step ran.
export function fail(t: SigninTx, code: FailureCode): SigninTx {
  ensurePending(t);
  return { ...t, status: 'failed', error: code };
}

export function cancel(t: SigninTx): SigninTx {
  ensurePending(t);
  return { ...t, status: 'cancelled' };
}

/** A device sign-in completes without a redirect (docs/oauth-device.md). */
export function complete(t: SigninTx, redirectTo: string | null, now: Date): SigninTx {
  ensurePending(t);
  return { ...t, status: 'completed', error: null, redirectTo, completedAt: now };
}
