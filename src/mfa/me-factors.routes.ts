// Self-service factors under /api/v1/realms/{realm}/me (spec doc 1, "Self-service one-time codes
// and factors"): TOTP re-enrollment, recovery-code regeneration and the HOTP token. Enrollment
// and activation stay allowed to recovery-restricted sessions (doc 1, Errors, case rule 1);
// adding a factor to an account that has one, or removing one, needs an MFA session (the
// credential-change rule of factor-rules.ts).
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import type { ApiCaller } from '../api/api-auth.ts';
import { apiRoute, type RequestCall } from '../api/api-route.ts';
import { type Recorder, recorder } from '../audit/index.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Tx } from '../platform/db/db.ts';
import { decodeBody, object, string } from '../platform/http/decode.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import type { RealmPolicy, RealmRow } from '../realms/index.ts';
import { brandName, currentPolicy, policyValue } from '../realms/index.ts';
import { lockUser, primaryEmail, removeRequiredAction, setUserState } from '../users/index.ts';
import { encodeBase32 } from './base32.ts';
import { noticeFactorChanged, requestLocale } from './factor-notice.ts';
import {
  allowedEnrolled,
  ENROLLMENT_TTL_MS,
  factorAllowed,
  hotpSettings,
  RESYNC_ATTEMPTS,
  RESYNC_WINDOW_MS,
  requireFactorAllowed,
  requireMfaForCredentialChange,
  requireMfaSession,
} from './factor-rules.ts';
import {
  advanceHotp,
  deleteEnrollment,
  deleteHotp,
  deleteTotp,
  type EnrollmentKind,
  enrolledFactors,
  enrollmentSeedContext,
  hotpSeedContext,
  insertEnrollment,
  lockEnrollment,
  lockHotp,
  recordResyncAttempt,
  storeHotp,
} from './factors.repo.ts';
import { replaceRecoveryCodes, storeTotp } from './mfa.repo.ts';
import { verifyHotp, verifyTotp } from './otp.ts';
import { hotpUri, newTotpSecret, totpUri } from './otpauth-uri.ts';
import { generateRecoveryCodes } from './recovery-codes.ts';
import { forgetRememberedDevices } from './remembered-devices.repo.ts';

const codeBody = object({ code: string({ minLength: 1, maxLength: 64 }) });
const resyncBody = object({
  code: string({ minLength: 1, maxLength: 64 }),
  next_code: string({ minLength: 1, maxLength: 64 }),
});

function userOf(caller: ApiCaller): string {
  if (caller.kind !== 'user') throw problem.forbidden('only a user has factors');
  return caller.id;
}

function keyringOf(ctx: ApiDeps): RootKeyring {
  if (!ctx.keyring) throw new Problem(503, 'temporarily_unavailable', 'no root key is configured');
  return ctx.keyring;
}

const invalidCode = () =>
  new Problem(422, 'validation_failed', 'the code does not match', {
    errors: [{ field: 'code', code: 'invalid_code' }],
  });

/** The account's label in authenticator apps: its primary email, else its id. */
async function accountLabel(q: Tx, realmId: string, userId: string): Promise<string> {
  const r = await q.query<{ value: string }>(
    `select value from user_identifiers where realm_id = $1 and user_id = $2
      order by (type = 'email') desc, is_primary desc, created_at limit 1`,
    [realmId, userId],
  );
  return r.rows[0]?.value ?? userId;
}

/** A strong factor activated: a recovery-restricted account is active again (doc 1, Account states). */
export async function restoreAccount(q: Tx, rec: Recorder, realmId: string, userId: string, now: Date) {
  const user = await lockUser(q, realmId, userId);
  if (user?.state !== 'recovery_restricted') return;
  await setUserState(q, realmId, userId, 'active', now);
  await rec.audit('user.reactivated', {
    category: 'security',
    subject: { type: 'user', id: userId },
    reason: 'FACTOR_ASSURANCE_RESTORED',
    data: { state: 'active' },
  });
  await rec.event('user.reactivated', {
    user_id: userId,
    state: 'active',
    reason: 'FACTOR_ASSURANCE_RESTORED',
  });
}

/** notifications.factor_changed for a self-service change (factor-notice.ts). */
async function mailFactorChange(
  ctx: ApiDeps,
  q: Tx,
  realm: RealmRow,
  policy: RealmPolicy,
  userId: string,
  change: {
    factor: 'totp' | 'hotp';
    change: 'added' | 'removed';
    acceptLanguage: string | string[] | undefined;
  },
  now: Date,
) {
  const to = await primaryEmail(q, realm.id, userId);
  const locale = requestLocale(change.acceptLanguage);
  await noticeFactorChanged(
    q,
    ctx,
    realm,
    policy,
    { factor: change.factor, change: change.change, to, locale },
    now,
  );
}

/** A factor activated: a restricted account is active again, and its owner may be mailed. */
async function afterActivation(
  ctx: ApiDeps,
  q: Tx,
  rec: Recorder,
  realm: RealmRow,
  policy: RealmPolicy,
  a: { userId: string; factor: 'totp' | 'hotp'; acceptLanguage: string | string[] | undefined },
  now: Date,
) {
  await restoreAccount(q, rec, realm.id, a.userId, now);
  const change = { factor: a.factor, change: 'added', acceptLanguage: a.acceptLanguage } as const;
  await mailFactorChange(ctx, q, realm, policy, a.userId, change, now);
}

async function enroll(
  ctx: ApiDeps,
  realm: RealmRow,
  caller: ApiCaller,
  call: RequestCall,
  kind: EnrollmentKind,
) {
  const userId = userOf(caller);
  const keyring = keyringOf(ctx);
  return ctx.db.tx(async (q) => {
    const policy = await currentPolicy(q, realm.id);
    requireFactorAllowed(policy, kind);
    requireMfaForCredentialChange(
      allowedEnrolled(await enrolledFactors(q, realm.id, userId), policy),
      caller.sessionMfa,
      'add_factor',
    );
    const id = newId('fen', call.now.getTime());
    const secret = newTotpSecret();
    const expiresAt = new Date(call.now.getTime() + ENROLLMENT_TTL_MS);
    await insertEnrollment(q, {
      realmId: realm.id,
      id,
      userId,
      kind,
      sealed: keyring.encrypt('totp-seed', secret, enrollmentSeedContext(realm.id, id)),
      expiresAt,
      now: call.now,
    });
    const base32 = encodeBase32(secret);
    const uriInput = {
      issuer: await brandName(q, realm),
      account: await accountLabel(q, realm.id, userId),
      secret: base32,
    };
    return {
      credential_id: id,
      secret: base32,
      otpauth_uri: kind === 'hotp' ? hotpUri({ ...uriInput, counter: 0 }) : totpUri(uriInput),
      ...(kind === 'hotp' ? { counter: 0 } : {}),
      expires_at: expiresAt.toISOString(),
    };
  });
}

export function registerMeFactorRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const enrolling = { audience: 'account', allowedWhileRestricted: true } as const;
  const account = { audience: 'account' } as const;

  for (const kind of ['totp', 'hotp'] as const) {
    apiRoute(
      app,
      ctx,
      'POST',
      `/me/${kind}/enroll`,
      enrolling,
      async ({ req, reply, realm, caller, call }) => {
        decodeBody(object({}), req.body ?? {});
        return reply
          .code(201)
          .header('cache-control', 'no-store')
          .send(await enroll(ctx, realm, caller, call, kind));
      },
    );
  }

  // TOTP activation replaces the authenticator and always issues a new set of recovery codes.
  apiRoute(app, ctx, 'POST', '/me/totp/activate', enrolling, async ({ req, reply, realm, caller, call }) => {
    const userId = userOf(caller);
    const body = decodeBody(codeBody, req.body ?? {});
    const keyring = keyringOf(ctx);
    const result = await ctx.db.tx(async (q) => {
      const policy = await currentPolicy(q, realm.id);
      requireFactorAllowed(policy, 'totp');
      const pending = await lockEnrollment(q, realm.id, userId, 'totp', call.now);
      if (!pending) throw problem.conflict('no TOTP enrollment is pending; start with /me/totp/enroll');
      requireMfaForCredentialChange(
        allowedEnrolled(await enrolledFactors(q, realm.id, userId), policy),
        caller.sessionMfa,
        'add_factor',
      );
      const secret = keyring.decrypt(
        'totp-seed',
        pending.secret_sealed,
        enrollmentSeedContext(realm.id, pending.id),
      );
      const r = verifyTotp(secret, body.code.trim(), call.now.getTime());
      if (!r.ok) return null;
      await storeTotp(q, keyring, realm.id, userId, secret, r.step, call.now);
      await deleteEnrollment(q, realm.id, pending.id);
      // Recovery codes come with the authenticator while the realm allows them.
      const codes = factorAllowed(policy, 'recovery_code') ? generateRecoveryCodes() : null;
      if (codes) await replaceRecoveryCodes(q, realm.id, userId, codes, call.now);
      await removeRequiredAction(q, realm.id, userId, 'configure_totp', call.now);
      const rec = recorder(q, call);
      await rec.audit('mfa.totp.enrolled', {
        category: 'security',
        subject: { type: 'user', id: userId },
        data: { credential_id: pending.id, recovery_codes: codes?.length ?? 0, self_service: true },
      });
      const added = { userId, factor: 'totp', acceptLanguage: req.headers['accept-language'] } as const;
      await afterActivation(ctx, q, rec, realm, policy, added, call.now);
      return { codes };
    });
    if (!result) throw invalidCode();
    return reply
      .header('cache-control', 'no-store')
      .send({ status: 'totp_enrolled', ...(result.codes ? { recovery_codes: result.codes } : {}) });
  });

  apiRoute(
    app,
    ctx,
    'POST',
    '/me/recovery-codes/regenerate',
    account,
    async ({ req, reply, realm, caller, call }) => {
      const userId = userOf(caller);
      decodeBody(object({}), req.body ?? {});
      requireMfaSession(caller.sessionMfa, 'regenerating recovery codes needs a session that completed MFA');
      const codes = await ctx.db.tx(async (q) => {
        const policy = await currentPolicy(q, realm.id);
        requireFactorAllowed(policy, 'recovery_code');
        const enrolled = allowedEnrolled(await enrolledFactors(q, realm.id, userId), policy);
        if (!enrolled.totp && !enrolled.hotp && !enrolled.webauthn)
          throw problem.conflict('the account has no second factor');
        const fresh = generateRecoveryCodes();
        await replaceRecoveryCodes(q, realm.id, userId, fresh, call.now);
        await recorder(q, call).audit('mfa.recovery_codes.regenerated', {
          category: 'security',
          subject: { type: 'user', id: userId },
          data: { recovery_codes: fresh.length },
        });
        return fresh;
      });
      return reply.header('cache-control', 'no-store').send({ recovery_codes: codes });
    },
  );

  apiRoute(app, ctx, 'POST', '/me/hotp/activate', enrolling, async ({ req, reply, realm, caller, call }) => {
    const userId = userOf(caller);
    const body = decodeBody(codeBody, req.body ?? {});
    const keyring = keyringOf(ctx);
    const result = await ctx.db.tx(async (q) => {
      const policy = await currentPolicy(q, realm.id);
      requireFactorAllowed(policy, 'hotp');
      const pending = await lockEnrollment(q, realm.id, userId, 'hotp', call.now);
      if (!pending) throw problem.conflict('no HOTP enrollment is pending; start with /me/hotp/enroll');
      const enrolled = allowedEnrolled(await enrolledFactors(q, realm.id, userId), policy);
      requireMfaForCredentialChange(enrolled, caller.sessionMfa, 'add_factor');
      const secret = keyring.decrypt(
        'totp-seed',
        pending.secret_sealed,
        enrollmentSeedContext(realm.id, pending.id),
      );
      const r = verifyHotp(secret, body.code.trim(), 0, hotpSettings(policy).lookAhead);
      if (!r.ok) return null;
      await storeHotp(q, keyring, {
        realmId: realm.id,
        userId,
        id: pending.id,
        secret,
        counter: r.nextCounter,
        now: call.now,
      });
      await deleteEnrollment(q, realm.id, pending.id);
      const codes =
        enrolled.recoveryCodes || !factorAllowed(policy, 'recovery_code') ? null : generateRecoveryCodes();
      if (codes) await replaceRecoveryCodes(q, realm.id, userId, codes, call.now);
      await removeRequiredAction(q, realm.id, userId, 'configure_totp', call.now);
      const rec = recorder(q, call);
      await rec.audit('mfa.hotp.enrolled', {
        category: 'security',
        subject: { type: 'user', id: userId },
        data: { credential_id: pending.id, recovery_codes: codes?.length ?? 0 },
      });
      const added = { userId, factor: 'hotp', acceptLanguage: req.headers['accept-language'] } as const;
      await afterActivation(ctx, q, rec, realm, policy, added, call.now);
      return { codes };
    });
    if (!result) throw invalidCode();
    return reply
      .header('cache-control', 'no-store')
      .send({ status: 'hotp_enrolled', ...(result.codes ? { recovery_codes: result.codes } : {}) });
  });

  // Resync: two consecutive codes; needs MFA proved with a factor other than HOTP itself. Attempts
  // are counted in the token's row and commit even when the codes are wrong (failing closed).
  apiRoute(app, ctx, 'POST', '/me/hotp/resync', account, async ({ req, realm, caller, call }) => {
    const userId = userOf(caller);
    const body = decodeBody(resyncBody, req.body ?? {});
    // A certificate is a second factor only from a multi-factor trust anchor, which makes the
    // session phishing-resistant (docs/certificate-signin.md).
    const certificateMfa = caller.token?.acr === 'phishing_resistant';
    const otherFactor = (caller.token?.amr ?? []).some(
      (f) => ['totp', 'recovery', 'hwk', 'fed_mfa'].includes(f) || (f === 'x509' && certificateMfa),
    );
    requireMfaSession(caller.sessionMfa && otherFactor, 'resynchronizing HOTP needs MFA with another factor');
    const keyring = keyringOf(ctx);
    const outcome = await ctx.db.tx(async (q) => {
      const policy = await currentPolicy(q, realm.id);
      const stored = await lockHotp(q, realm.id, userId);
      if (!stored) throw problem.notFound('the account has no HOTP token');
      const windowOpen =
        stored.resync_window_start !== null &&
        call.now.getTime() - new Date(stored.resync_window_start).getTime() < RESYNC_WINDOW_MS;
      const attempts = windowOpen ? stored.resync_attempts : 0;
      if (attempts >= RESYNC_ATTEMPTS) {
        const retry = Math.ceil(
          (new Date(stored.resync_window_start as Date).getTime() + RESYNC_WINDOW_MS - call.now.getTime()) /
            1000,
        );
        return { limited: Math.max(1, retry) } as const;
      }
      await recordResyncAttempt(
        q,
        realm.id,
        userId,
        windowOpen ? (stored.resync_window_start as Date) : call.now,
        attempts + 1,
      );
      const secret = keyring.decrypt('totp-seed', stored.secret_sealed, hotpSeedContext(realm.id, userId));
      const counter = Number(stored.counter);
      const window = hotpSettings(policy).resyncWindow;
      const code = body.code.trim();
      const next = body.nextCode.trim();
      let found: number | null = null;
      for (let c = counter; c <= counter + window; c++) {
        const first = verifyHotp(secret, code, c, 0);
        if (first.ok && found === null && verifyHotp(secret, next, c + 1, 0).ok) found = c;
      }
      if (found === null) return { ok: false } as const;
      await advanceHotp(q, realm.id, userId, found + 2);
      await recorder(q, call).audit('mfa.hotp.resynced', {
        category: 'security',
        subject: { type: 'user', id: userId },
        data: { skipped: found - counter },
      });
      return { ok: true, counter: found + 2 } as const;
    });
    if ('limited' in outcome) {
      throw new Problem(429, 'rate_limited', 'too many HOTP resync attempts', undefined, {
        'retry-after': String(outcome.limited),
      });
    }
    if (!outcome.ok) throw invalidCode();
    return { status: 'hotp_resynced', counter: outcome.counter };
  });

  // Removing the authenticator app or the HOTP token: the same rules for both (Keycloak's account
  // console removes either; the spec names no path, docs/decisions.md).
  for (const kind of ['totp', 'hotp'] as const) {
    const label = kind === 'totp' ? 'an authenticator app (TOTP)' : 'a HOTP token';
    apiRoute(app, ctx, 'DELETE', `/me/${kind}`, account, async ({ req, reply, realm, caller, call }) => {
      const userId = userOf(caller);
      await ctx.db.tx(async (q) => {
        const enrolled = await enrolledFactors(q, realm.id, userId);
        if (!enrolled[kind]) throw problem.notFound(`the account has no ${label}`);
        // A factor the realm no longer allows does not count: its owner can still remove it.
        const policy = await currentPolicy(q, realm.id);
        requireMfaForCredentialChange(allowedEnrolled(enrolled, policy), caller.sessionMfa, 'remove_factor');
        const others = kind === 'totp' ? enrolled.hotp : enrolled.totp;
        if (!others && !enrolled.webauthn && (await mustUseMfa(q, realm, userId)))
          throw new Problem(
            409,
            'last_sign_in_method',
            `${label} is the last second factor of an account that must use MFA`,
          );
        if (kind === 'totp') await deleteTotp(q, realm.id, userId);
        else await deleteHotp(q, realm.id, userId);
        const forgotten = await forgetRememberedDevices(q, realm.id, userId, null);
        await recorder(q, call).audit(kind === 'totp' ? 'mfa.totp.removed' : 'mfa.hotp.removed', {
          category: 'security',
          subject: { type: 'user', id: userId },
          data: { remembered_devices_forgotten: forgotten },
        });
        const notice = {
          factor: kind,
          change: 'removed',
          acceptLanguage: req.headers['accept-language'],
        } as const;
        await mailFactorChange(ctx, q, realm, policy, userId, notice, call.now);
      });
      return reply.code(204).send();
    });
  }

  // Forgetting remembered devices stays allowed to recovery-restricted sessions (case rule 1).
  const forgetting = { audience: 'account', allowedWhileRestricted: true } as const;
  const forget = async (realm: RealmRow, caller: ApiCaller, call: RequestCall, id: string | null) => {
    const userId = userOf(caller);
    return ctx.db.tx(async (q) => {
      const n = await forgetRememberedDevices(q, realm.id, userId, id);
      if (id !== null && n === 0) throw problem.notFound('no such remembered device');
      await recorder(q, call).audit('device.forgotten', {
        category: 'security',
        subject: { type: 'user', id: userId },
        ...(id ? { target: { type: 'remembered_device', id } } : {}),
        data: { forgotten: n },
      });
    });
  };
  apiRoute(
    app,
    ctx,
    'DELETE',
    '/me/remembered-devices',
    forgetting,
    async ({ reply, realm, caller, call }) => {
      await forget(realm, caller, call, null);
      return reply.code(204).send();
    },
  );
  apiRoute<{ id: string }>(
    app,
    ctx,
    'DELETE',
    '/me/remembered-devices/:id',
    forgetting,
    async ({ req, reply, realm, caller, call }) => {
      if (!/^rdv_[0-9a-z]{26}$/.test(req.params.id)) throw problem.notFound('no such remembered device');
      await forget(realm, caller, call, req.params.id);
      return reply.code(204).send();
    },
  );
}

/** The realm requires MFA or the account is protected (spec doc 1, "MFA is required when"). */
export async function mustUseMfa(q: Tx, realm: RealmRow, userId: string): Promise<boolean> {
  if (policyValue(await currentPolicy(q, realm.id), 'mfa', 'requirement') === 'required') return true;
  const r = await q.query<{ protected: boolean }>(
    'select protected from users where realm_id = $1 and id = $2',
    [realm.id, userId],
  );
  return r.rows[0]?.protected ?? false;
}
