// Self-service password change and identifier removal under /api/v1/realms/{realm}/me (spec doc 1,
// "Self-service one-time codes and factors"): a password change needs recent authentication, the
// current password and, when the account has a second factor, an MFA session; it honours
// password.history_count and password.revoke_sessions_on_change.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { type ApiCaller, requireRecentAuth } from '../api/api-auth.ts';
import { apiRoute } from '../api/api-route.ts';
import { recorder } from '../audit/index.ts';
import { allowedEnrolled, requireMfaForCredentialChange } from '../mfa/factor-rules.ts';
import { enrolledFactors } from '../mfa/index.ts';
import { decodeBody, object, string } from '../platform/http/decode.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import { currentPolicy } from '../realms/index.ts';
import { endSessionsAfterPasswordChange } from './password-change.ts';
import { keepReplacedPassword, passwordsRefused, refuseReusedPassword } from './password-reuse.ts';
import { MIN_PASSWORD_LENGTH } from './password-rules.ts';
import { refuseWeakPassword } from './password-strength.ts';
import { findPasswordVerifier, listIdentifiers, setPassword } from './users.repo.ts';

const passwordBody = object({
  current_password: string({ minLength: 1, maxBytes: 1024 }),
  new_password: string({ minLength: MIN_PASSWORD_LENGTH, maxBytes: 1024 }),
});

function userOf(caller: ApiCaller): string {
  if (caller.kind !== 'user') throw problem.forbidden('only a user has a password');
  return caller.id;
}

const fieldProblem = (field: string, code: string, detail: string) =>
  new Problem(422, 'validation_failed', detail, { errors: [{ field, code }] });

export function registerMeSecurityRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const account = { audience: 'account' } as const;

  apiRoute(app, ctx, 'POST', '/me/password', account, async ({ req, reply, realm, caller, call }) => {
    const userId = userOf(caller);
    const body = decodeBody(passwordBody, req.body ?? {});
    requireRecentAuth(ctx, caller, call.now);
    const policy = await currentPolicy(ctx.db, realm.id);
    requireMfaForCredentialChange(
      allowedEnrolled(await enrolledFactors(ctx.db, realm.id, userId), policy),
      caller.sessionMfa,
      'password',
    );
    const refused = passwordsRefused(policy);
    // Hashing runs before the transaction (it is the slow part and needs no lock).
    const current = await findPasswordVerifier(ctx.db, realm.id, userId);
    if (!current || !(await ctx.hasher.verify(body.currentPassword, current)))
      throw fieldProblem('current_password', 'invalid', 'the current password is not right');
    const who = { realmId: realm.id, userId };
    await refuseWeakPassword(policy, 'new_password', body.newPassword);
    await refuseReusedPassword(ctx.db, ctx.hasher, who, body.newPassword, refused, current);
    const verifier = await ctx.hasher.hash(body.newPassword);
    const revoked = await ctx.db.tx(async (q) => {
      await keepReplacedPassword(q, who, refused, call.now);
      await setPassword(q, realm.id, userId, verifier, call.now);
      const rec = recorder(q, call);
      const ended = await endSessionsAfterPasswordChange(q, rec, policy, {
        realmId: realm.id,
        userId,
        keepSessionId: caller.sessionId,
        now: call.now,
      });
      await rec.audit('user.password_changed', {
        category: 'security',
        subject: { type: 'user', id: userId },
        reason: 'self_service',
        data: { sessions_revoked: ended.length },
      });
      return ended.length;
    });
    return reply.send({ status: 'password_changed', sessions_revoked: revoked });
  });

  apiRoute<{ id: string }>(
    app,
    ctx,
    'DELETE',
    '/me/identifiers/:id',
    account,
    async ({ req, reply, realm, caller, call }) => {
      const userId = userOf(caller);
      requireRecentAuth(ctx, caller, call.now);
      await ctx.db.tx(async (q) => {
        await q.query('select 1 from users where realm_id = $1 and id = $2 for update', [realm.id, userId]);
        const identifiers = await listIdentifiers(q, realm.id, [userId]);
        const target = identifiers.find((i) => i.id === req.params.id);
        if (!target) throw problem.notFound('no such identifier');
        // The last identifier is the last way to name the account at sign-in.
        if (identifiers.length === 1)
          throw new Problem(
            409,
            'last_sign_in_method',
            'the last identifier of the account cannot be removed',
          );
        await q.query('delete from user_identifiers where realm_id = $1 and id = $2', [realm.id, target.id]);
        // The next primary of the type is a verified one where there is one, as an administrator's
        // choice must be (POST /users/{user}/identifiers/{id}/primary).
        if (target.is_primary) {
          await q.query(
            `update user_identifiers set is_primary = true where realm_id = $1 and id = (
             select id from user_identifiers where realm_id = $1 and user_id = $2 and type = $3
              order by verified desc, created_at limit 1)`,
            [realm.id, userId, target.type],
          );
        }
        await q.query(
          'update users set profile_updated_at = $3, updated_at = $3 where realm_id = $1 and id = $2',
          [realm.id, userId, call.now],
        );
        await recorder(q, call).audit('user.identifier.removed', {
          category: 'identity',
          subject: { type: 'user', id: userId },
          target: { type: 'identifier', id: target.id },
          data: { type: target.type },
        });
      });
      return reply.code(204).send();
    },
  );
}
