// password/update {new_password}: the administrator-set required action update_password.
import { recordAudit } from '../../audit/index.ts';
import { addEvent } from '../../events/index.ts';
import { object, string } from '../../platform/http/decode.ts';
import { policyValue } from '../../realms/index.ts';
import { revokeUserSessions } from '../../sessions/index.ts';
import { removeRequiredAction, setPassword } from '../../users/index.ts';
import type { PasswordVerifier } from '../../users/password-hasher.ts';
import { MIN_PASSWORD_LENGTH } from '../../users/password-rules.ts';
import type { Step } from './step.ts';

const decode = object({ new_password: string({ minLength: MIN_PASSWORD_LENGTH, maxBytes: 1024 }) });

export const updatePasswordStep: Step<{ newPassword: string }, PasswordVerifier> = {
  path: 'password/update',
  action: 'update_password',
  decode,
  prepare: (app, _t, body) => app.hasher.hash(body.newPassword),
  async run(q, t, _body, ctx, verifier) {
    const userId = t.userId as string; // the step is offered only after primary authentication
    await setPassword(q, t.realmId, userId, verifier, ctx.now);
    await removeRequiredAction(q, t.realmId, userId, 'update_password', ctx.now);
    // Other sessions ended with the old password unless the realm keeps them (spec doc 1,
    // policy password.revoke_sessions_on_change, default true).
    if (policyValue(ctx.policy, 'password', 'revoke_sessions_on_change') !== false) {
      for (const sessionId of await revokeUserSessions(q, t.realmId, userId, 'password_changed', ctx.now)) {
        await addEvent(q, {
          realmId: t.realmId,
          type: 'session.revoked',
          occurredAt: ctx.now,
          correlationId: ctx.correlationId,
          data: { user_id: userId, session_id: sessionId, reason: 'password_changed' },
        });
      }
    }
    await recordAudit(
      q,
      {
        realmId: t.realmId,
        type: 'user.password_changed',
        category: 'security',
        actor: { type: 'user', id: userId },
        subject: { type: 'user', id: userId },
        correlationId: ctx.correlationId,
        reason: 'required action update_password',
        data: { transaction_id: t.id },
      },
      ctx.now,
    );
    return { tx: t };
  },
};
