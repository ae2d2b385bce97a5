// Self-service passkeys under /api/v1/realms/{realm}/me (spec doc 1, self-service factor table):
// registration (registration-options, then registration-complete), and listing, renaming and
// removing passkeys. Registration stays allowed to recovery-restricted sessions (case rule 1);
// registering and removing follow the credential-change rule (factor-rules.ts: an MFA session
// once the account has a second factor); removing the last sign-in method or the last required
// second factor answers 409 last_sign_in_method.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../api/api.deps.ts';
import type { ApiCaller } from '../../api/api-auth.ts';
import { apiRoute } from '../../api/api-route.ts';
import { recorder } from '../../audit/index.ts';
import { hasActiveLink } from '../../identity-providers/index.ts';
import type { Tx } from '../../platform/db/db.ts';
import { decodeBody, object, optional, string, unknownJson } from '../../platform/http/decode.ts';
import { Problem, problem } from '../../platform/http/problem.ts';
import { newId } from '../../platform/ids.ts';
import type { RealmPolicy, RealmRow } from '../../realms/index.ts';
import { brandNameOf, currentPolicy, policyValue } from '../../realms/index.ts';
import { findPasswordVerifier, lockUser, primaryEmail } from '../../users/index.ts';
import { noticeFactorChanged, requestLocale } from '../factor-notice.ts';
import { allowedEnrolled, requireMfaForCredentialChange } from '../factor-rules.ts';
import { enrolledFactors } from '../factors.repo.ts';
import { mustUseMfa, restoreAccount } from '../me-factors.routes.ts';
import { forgetRememberedDevices } from '../remembered-devices.repo.ts';
import {
  consumeCeremony,
  deletePasskey,
  findCeremony,
  insertCeremony,
  listPasskeys,
  lockPasskey,
  renamePasskey,
} from './passkeys.repo.ts';
import {
  defaultPasskeyName,
  enrollPasskey,
  presentPasskey,
  verifyRegistrationAnswer,
} from './passkeys.service.ts';
import { CEREMONY_TTL_MS, type RegistrationExpected, registrationOptions } from './registration.ts';
import { passkeyLoginOn, webauthnFactorAllowed, webauthnPolicy } from './webauthn-policy.ts';

/**
 * A passkey may be registered while the realm allows it as a second factor (mfa.allowed_factors)
 * or as a sign-in method (login.passkeys); otherwise 409, as for TOTP and HOTP.
 */
function requirePasskeysAllowed(policy: RealmPolicy): void {
  if (!webauthnFactorAllowed(policy) && !passkeyLoginOn(policy))
    throw new Problem(409, 'conflict', 'the realm allows passkeys neither as a factor nor for sign-in');
}

const nameDecoder = string({ minLength: 1, maxLength: 64, pattern: /^[^\p{Cc}]*$/u });
const completeBody = object({
  credential: unknownJson({ maxBytes: 64 * 1024 }),
  name: optional(nameDecoder),
});
const renameBody = object({ name: nameDecoder });
const PASSKEY_ID = /^pkc_[0-9a-z]{26}$/;

function userOf(caller: ApiCaller): string {
  if (caller.kind !== 'user') throw problem.forbidden('only a user has passkeys');
  return caller.id;
}

/**
 * Whether removing this passkey would leave the account unable to sign in (no password, no other
 * passkey, no emailed code or link) or without the second factor it must use.
 */
async function lastMethod(q: Tx, realm: RealmRow, userId: string, remaining: number): Promise<string | null> {
  if (remaining > 0) return null;
  const enrolled = await enrolledFactors(q, realm.id, userId);
  if (!enrolled.totp && !enrolled.hotp && (await mustUseMfa(q, realm, userId)))
    return 'the last second factor of an account that must use MFA';
  const policy = await currentPolicy(q, realm.id);
  const login = (m: string) => policyValue(policy, 'login', m) === true;
  const password =
    policyValue(policy, 'login', 'password') !== false &&
    (await findPasswordVerifier(q, realm.id, userId)) !== null;
  const emailed =
    (login('email_otp') || login('magic_link')) && (await primaryEmail(q, realm.id, userId)) !== null;
  if (password || emailed) return null;
  return (await hasActiveLink(q, realm.id, userId)) ? null : 'the last way this account can sign in';
}

export function registerMePasskeyRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  /** notifications.factor_changed (factor-notice.ts). */
  const mailPasskeyChange = async (
    q: Tx,
    realm: RealmRow,
    policy: RealmPolicy,
    userId: string,
    change: 'added' | 'removed',
    acceptLanguage: string | string[] | undefined,
    now: Date,
  ) => {
    const to = await primaryEmail(q, realm.id, userId);
    const notice = { factor: 'webauthn', change, to, locale: requestLocale(acceptLanguage) } as const;
    await noticeFactorChanged(q, ctx, realm, policy, notice, now);
  };
  const enrolling = { audience: 'account', allowedWhileRestricted: true } as const;
  const account = { audience: 'account' } as const;

  apiRoute(
    app,
    ctx,
    'POST',
    '/me/webauthn/registration-options',
    enrolling,
    async ({ req, reply, realm, caller, call }) => {
      const userId = userOf(caller);
      decodeBody(object({}), req.body ?? {});
      const options = await ctx.db.tx(async (q) => {
        const realmPolicy = await currentPolicy(q, realm.id);
        requirePasskeysAllowed(realmPolicy);
        requireMfaForCredentialChange(
          allowedEnrolled(await enrolledFactors(q, realm.id, userId), realmPolicy),
          caller.sessionMfa,
          'add_factor',
        );
        const policy = webauthnPolicy(realmPolicy, ctx.config.server.publicOrigin);
        const name = (await primaryEmail(q, realm.id, userId)) ?? userId;
        const r = await registrationOptions(
          policy,
          brandNameOf(realm, realmPolicy),
          { id: userId, name, displayName: name },
          await listPasskeys(q, realm.id, userId),
        );
        await insertCeremony(
          q,
          realm.id,
          {
            id: newId('wac', call.now.getTime()),
            kind: 'registration',
            transactionId: null,
            userId,
            challenge: r.options.challenge,
            expected: r.expected,
            expiresAt: new Date(call.now.getTime() + CEREMONY_TTL_MS),
          },
          call.now,
        );
        return r.options;
      });
      return reply.header('cache-control', 'no-store').send(options);
    },
  );

  apiRoute(
    app,
    ctx,
    'POST',
    '/me/webauthn/registration-complete',
    enrolling,
    async ({ req, reply, realm, caller, call }) => {
      const userId = userOf(caller);
      const body = decodeBody(completeBody, req.body ?? {});
      const owner = { transactionId: null, userId };
      const ceremony = await findCeremony<RegistrationExpected>(
        ctx.db,
        realm.id,
        'registration',
        owner,
        call.now,
      );
      if (!ceremony)
        throw problem.conflict('no passkey registration is pending; start with registration-options');
      const passkey = await verifyRegistrationAnswer(
        { db: ctx.db, fidoMetadata: ctx.fidoMetadata, publicOrigin: ctx.config.server.publicOrigin },
        realm.id,
        ceremony,
        body.credential,
        call.now,
        (q, refusal) =>
          recorder(q, call).audit('mfa.webauthn.enrollment_failed', {
            category: 'security',
            outcome: 'failure',
            reason: refusal,
            subject: { type: 'user', id: userId },
            data: { reason: refusal, self_service: true },
          }),
      );
      const result = await ctx.db.tx(async (q) => {
        if (!(await consumeCeremony(q, realm.id, ceremony.id)))
          throw problem.conflict('the passkey registration was completed already');
        const realmPolicy = await currentPolicy(q, realm.id);
        requirePasskeysAllowed(realmPolicy);
        const enrolled = allowedEnrolled(await enrolledFactors(q, realm.id, userId), realmPolicy);
        requireMfaForCredentialChange(enrolled, caller.sessionMfa, 'add_factor');
        const name = body.name ?? defaultPasskeyName(call.now);
        const { id, codes } = await enrollPasskey(q, realm.id, userId, passkey, name, call.now, realmPolicy);
        const rec = recorder(q, call);
        await rec.audit('mfa.webauthn.enrolled', {
          category: 'security',
          subject: { type: 'user', id: userId },
          data: {
            passkey_id: id,
            aaguid: passkey.aaguid,
            attestation_trusted: passkey.attestationTrusted,
            recovery_codes: codes?.length ?? 0,
            self_service: true,
          },
        });
        await restoreAccount(q, rec, realm.id, userId, call.now);
        await mailPasskeyChange(
          q,
          realm,
          realmPolicy,
          userId,
          'added',
          req.headers['accept-language'],
          call.now,
        );
        const row = await lockPasskey(q, realm.id, id);
        return { row, codes };
      });
      return reply
        .code(201)
        .header('cache-control', 'no-store')
        .send({
          ...(result.row ? presentPasskey(result.row) : {}),
          ...(result.codes ? { recovery_codes: result.codes } : {}),
        });
    },
  );

  apiRoute(app, ctx, 'GET', '/me/webauthn/credentials', account, async ({ realm, caller }) => {
    const userId = userOf(caller);
    return { items: (await listPasskeys(ctx.db, realm.id, userId)).map(presentPasskey) };
  });

  apiRoute<{ id: string }>(
    app,
    ctx,
    'PATCH',
    '/me/webauthn/credentials/:id',
    account,
    async ({ req, realm, caller, call }) => {
      const userId = userOf(caller);
      const body = decodeBody(renameBody, req.body ?? {});
      if (!PASSKEY_ID.test(req.params.id)) throw problem.notFound('no such passkey');
      return ctx.db.tx(async (q) => {
        if (!(await renamePasskey(q, realm.id, userId, req.params.id, body.name)))
          throw problem.notFound('no such passkey');
        await recorder(q, call).audit('mfa.webauthn.renamed', {
          category: 'security',
          subject: { type: 'user', id: userId },
          target: { type: 'passkey', id: req.params.id },
          data: { passkey_id: req.params.id },
        });
        const row = await lockPasskey(q, realm.id, req.params.id);
        return row ? presentPasskey(row) : {};
      });
    },
  );

  apiRoute<{ id: string }>(
    app,
    ctx,
    'DELETE',
    '/me/webauthn/credentials/:id',
    account,
    async ({ req, reply, realm, caller, call }) => {
      const userId = userOf(caller);
      if (!PASSKEY_ID.test(req.params.id)) throw problem.notFound('no such passkey');
      await ctx.db.tx(async (q) => {
        // One removal at a time per account, so two cannot each leave the other as "not the last".
        await lockUser(q, realm.id, userId);
        const all = await listPasskeys(q, realm.id, userId);
        const target = all.find((p) => p.id === req.params.id);
        if (!target || !(await lockPasskey(q, realm.id, target.id)))
          throw problem.notFound('no such passkey');
        const policy = await currentPolicy(q, realm.id);
        requireMfaForCredentialChange(
          allowedEnrolled(await enrolledFactors(q, realm.id, userId), policy),
          caller.sessionMfa,
          'remove_factor',
        );
        const why = await lastMethod(q, realm, userId, all.length - 1);
        if (why) throw new Problem(409, 'last_sign_in_method', `this passkey is ${why}`);
        await deletePasskey(q, realm.id, userId, target.id);
        const forgotten = await forgetRememberedDevices(q, realm.id, userId, null);
        await recorder(q, call).audit('mfa.webauthn.removed', {
          category: 'security',
          subject: { type: 'user', id: userId },
          target: { type: 'passkey', id: target.id },
          data: { passkey_id: target.id, aaguid: target.aaguid, remembered_devices_forgotten: forgotten },
        });
        const language = req.headers['accept-language'];
        await mailPasskeyChange(q, realm, policy, userId, 'removed', language, call.now);
      });
      return reply.code(204).send();
    },
  );
}
