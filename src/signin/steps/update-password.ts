// password/update {new_password}: the administrator-set required action update_password, and the
// new password after a proved reset code. The current password (and the earlier ones the realm's
// password policy keeps) is refused before anything is hashed (users/password-reuse.ts).
import { object, string } from '../../platform/http/decode.ts';
import { currentPolicy } from '../../realms/index.ts';
import { endAccountSessions } from '../../sessions/index.ts';
import {
  endSessionsAfterPasswordChange,
  keepReplacedPassword,
  passwordsRefused,
  refuseReusedPassword,
  refuseWeakPassword,
  removeRequiredAction,
  setPassword,
} from '../../users/index.ts';
import type { PasswordVerifier } from '../../users/password-hasher.ts';
import { MIN_PASSWORD_LENGTH } from '../../users/password-rules.ts';
import { forgetReset } from '../challenges.repo.ts';
import { type Step, stepActor, stepRecorder } from './step.ts';

const decode = object({ new_password: string({ minLength: MIN_PASSWORD_LENGTH, maxBytes: 1024 }) });

export const updatePasswordStep: Step<{ newPassword: string }, PasswordVerifier> = {
  path: 'password/update',
  spendsBudgets: false,
  action: 'update_password',
  decode,
  async prepare(app, t, body) {
    // Before primary authentication the step is not offered: run answers that with a conflict.
    if (t.userId) {
      const policy = await currentPolicy(app.db, t.realmId);
      await refuseWeakPassword(policy, 'new_password', body.newPassword, t.identifier ? [t.identifier] : []);
      const refused = passwordsRefused(policy);
      const who = { realmId: t.realmId, userId: t.userId };
      await refuseReusedPassword(app.db, app.hasher, who, body.newPassword, refused);
    }
    return app.hasher.hash(body.newPassword);
  },
  async run(q, t, _body, ctx, verifier) {
    const userId = t.userId as string; // the step is offered only after primary authentication
    await keepReplacedPassword(q, { realmId: t.realmId, userId }, passwordsRefused(ctx.policy), ctx.now);
    await setPassword(q, t.realmId, userId, verifier, ctx.now);
    await removeRequiredAction(q, t.realmId, userId, 'update_password', ctx.now);
    // The proved reset code is spent: update_password is not offered again in this transaction.
    if (ctx.facts.resetProved) await forgetReset(q, t.realmId, t.id);
    const record = stepRecorder(q, t.realmId, ctx, stepActor(userId));
    if (ctx.facts.resetProved) {
      // A self-service reset ends every session and grant of the account (spec doc 2, Catalog:
      // user.password_reset), whatever password.revoke_sessions_on_change says.
      const revoked = await endAccountSessions(
        q,
        t.realmId,
        userId,
        'password_reset',
        ctx.now,
        ctx.correlationId,
      );
      await record.audit('user.password_reset', {
        category: 'security',
        subject: { type: 'user', id: userId },
        data: { transaction_id: t.id, sessions_revoked: revoked.sessions.length },
      });
      await record.event('user.password_reset', { user_id: userId });
      return { tx: t };
    }
    // This sign-in's session does not exist yet: every earlier one ends.
    await endSessionsAfterPasswordChange(q, record, ctx.policy, {
      realmId: t.realmId,
      userId,
      keepSessionId: null,
      now: ctx.now,
    });
    await record.audit('user.password_changed', {
      category: 'security',
      subject: { type: 'user', id: userId },
      reason: 'required action update_password',
      data: { transaction_id: t.id },
    });
    return { tx: t };
  },
};
