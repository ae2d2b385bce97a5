// remember-device {remember}: offered after a second factor while login.remember_devices is on.
// Yes stores a device token (a digest) valid login.remember_device_days and hands it out once: as
// the pa_rd cookie in a browser, as one_time.remembered_device_token to a headless client.
import { digestToken } from '../../kernel/digest.ts';
import { insertRememberedDevice } from '../../mfa/index.ts';
import { boolean, object } from '../../platform/http/decode.ts';
import { newId, randomToken } from '../../platform/ids.ts';
import { recordRememberAnswer } from '../device-choices.repo.ts';
import { rememberDeviceDays } from '../remembered-device.ts';
import { type Step, stepActor, stepRecorder } from './step.ts';

export const rememberDeviceStep: Step<{ remember: boolean }> = {
  path: 'remember-device',
  spendsBudgets: false,
  action: 'remember_device',
  decode: object({ remember: boolean() }),
  async run(q, t, body, ctx) {
    await recordRememberAnswer(q, t.realmId, t.id, body.remember);
    const userId = t.userId;
    if (!body.remember || !userId) return { tx: t };
    const token = randomToken();
    const id = newId('rdv', ctx.now.getTime());
    const expiresAt = new Date(ctx.now.getTime() + rememberDeviceDays(ctx.policy) * 86_400_000);
    await insertRememberedDevice(q, {
      realmId: t.realmId,
      id,
      userId,
      tokenDigest: digestToken(token),
      userAgent: t.userAgent,
      now: ctx.now,
      expiresAt,
    });
    await stepRecorder(q, t.realmId, ctx, stepActor(userId)).audit('device.remembered', {
      category: 'security',
      subject: { type: 'user', id: userId },
      target: { type: 'remembered_device', id },
      data: { transaction_id: t.id, expires_at: expiresAt.toISOString() },
    });
    return { tx: t, oneTime: { remembered_device_token: token } };
  },
};
