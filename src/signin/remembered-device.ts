// Remembered devices at sign-in (spec doc 1, login.remember_devices; docs/security.md,
// "Remembered devices"): a device presented with a live token of the account may skip the second
// factor where the MFA requirement allows it; after MFA the user is offered remember_device.
import { digestToken } from '../kernel/digest.ts';
import { findRememberedDevice, touchRememberedDevice } from '../mfa/index.ts';
import type { Tx } from '../platform/db/db.ts';
import type { RealmPolicy } from '../realms/index.ts';
import { policyValue } from '../realms/index.ts';
import { notePresentedDevice } from './device-choices.repo.ts';
import type { SigninTx } from './transaction.ts';

export const rememberDevicesOn = (policy: RealmPolicy): boolean =>
  policyValue(policy, 'login', 'remember_devices') === true;

/** login.remember_device_days, at most 90 (spec doc 1, Limits); 30 when unset. */
export function rememberDeviceDays(policy: RealmPolicy): number {
  const v = policyValue(policy, 'login', 'remember_device_days');
  return typeof v === 'number' && Number.isInteger(v) && v > 0 ? Math.min(v, 90) : 30;
}

/** A token presented with a step: noted on the transaction when it is a live device of its account. */
export async function notePresentedToken(
  q: Tx,
  t: SigninTx,
  token: string | null,
  policy: RealmPolicy,
  now: Date,
) {
  if (!token || !t.userId || !rememberDevicesOn(policy) || token.length > 256) return;
  const device = await findRememberedDevice(q, t.realmId, t.userId, digestToken(token), now);
  if (!device) return;
  await notePresentedDevice(q, t.realmId, t.id, device.id);
  await touchRememberedDevice(q, t.realmId, device.id, now);
}
