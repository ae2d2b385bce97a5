// Passkey enrollment in a sign-in (action enroll_webauthn): webauthn/registration-options {}
// returns state.webauthn, then webauthn/register {credential, name} (spec doc 1, endpoint table).
// The registration is checked against the realm's passkey policy before the row lock; a refusal
// is audited mfa.webauthn.enrollment_failed and answered 422 (or feature_disabled). Success
// stores the passkey, audits mfa.webauthn.enrolled, issues recovery codes when the account has
// none, and counts as the factor the ceremony proved.
import { recorder } from '../../audit/index.ts';
import {
  CEREMONY_TTL_MS,
  consumeCeremony,
  defaultPasskeyName,
  enrollPasskey,
  findCeremony,
  insertCeremony,
  listPasskeys,
  type RegisteredPasskey,
  type RegistrationExpected,
  registrationOptions,
  verifyRegistrationAnswer,
  webauthnPolicy,
} from '../../mfa/index.ts';
import { object, optional, string } from '../../platform/http/decode.ts';
import { problem } from '../../platform/http/problem.ts';
import { newId } from '../../platform/ids.ts';
import { brandNameOf } from '../../realms/index.ts';
import { phishingResistantDemanded } from '../next-actions.ts';
import { withFactor } from '../transitions.ts';
import { mailFactorAdded, restoreAfterStrongFactor } from './account-effects.ts';
import { type Step, stepActor, stepRecorder } from './step.ts';
import { credentialBody } from './webauthn.ts';

export const passkeyName = string({ minLength: 1, maxLength: 64, pattern: /^[^\p{Cc}]*$/u });

export const webauthnRegistrationOptionsStep: Step<Record<string, never>> = {
  path: 'webauthn/registration-options',
  spendsBudgets: false,
  action: 'enroll_webauthn',
  decode: object({}),
  async run(q, t, _body, ctx) {
    const userId = t.userId;
    if (!userId) throw problem.conflict('no account to enroll a passkey for');
    const policy = webauthnPolicy(ctx.policy, ctx.app.config.server.publicOrigin);
    const name = ctx.facts.user?.email ?? t.identifier ?? userId;
    const { options, expected } = await registrationOptions(
      policy,
      brandNameOf(ctx.realm, ctx.policy),
      { id: userId, name, displayName: ctx.facts.user?.displayName ?? name },
      await listPasskeys(q, t.realmId, userId),
      { requireUserVerification: phishingResistantDemanded(t, ctx.facts) },
    );
    await insertCeremony(
      q,
      t.realmId,
      {
        id: newId('wac', ctx.now.getTime()),
        kind: 'registration',
        transactionId: t.id,
        userId,
        challenge: options.challenge,
        expected,
        expiresAt: new Date(ctx.now.getTime() + CEREMONY_TTL_MS),
      },
      ctx.now,
    );
    return { tx: t, webauthn: options as unknown as Record<string, unknown> };
  },
};

type Registered = { ceremonyId: string; passkey: RegisteredPasskey };

export const webauthnRegisterStep: Step<{ credential: unknown; name?: string }, Registered> = {
  path: 'webauthn/register',
  spendsBudgets: false,
  action: 'enroll_webauthn',
  decode: object({ ...credentialBody, name: optional(passkeyName) }),
  async prepare(app, t, body, correlationId) {
    const now = app.clock.now();
    const userId = t.userId;
    const ceremony = userId
      ? await findCeremony<RegistrationExpected>(
          app.db,
          t.realmId,
          'registration',
          { transactionId: t.id, userId },
          now,
        )
      : null;
    if (!ceremony || !userId)
      throw problem.conflict(
        'no passkey registration is pending; request webauthn/registration-options first',
      );
    const passkey = await verifyRegistrationAnswer(
      { db: app.db, fidoMetadata: app.fidoMetadata, publicOrigin: app.config.server.publicOrigin },
      t.realmId,
      ceremony,
      body.credential,
      now,
      (q, refusal) =>
        recorder(q, { realmId: t.realmId, actor: stepActor(userId), correlationId, now }).audit(
          'mfa.webauthn.enrollment_failed',
          {
            category: 'security',
            outcome: 'failure',
            reason: refusal,
            subject: { type: 'user', id: userId },
            data: { transaction_id: t.id, reason: refusal },
          },
        ),
    );
    return { ceremonyId: ceremony.id, passkey };
  },
  async run(q, t, body, ctx, { ceremonyId, passkey: p }) {
    const userId = t.userId;
    if (!userId || !(await consumeCeremony(q, t.realmId, ceremonyId)))
      throw problem.conflict('the passkey registration was answered already; request new options');
    const name = body.name ?? defaultPasskeyName(ctx.now);
    const { id, codes } = await enrollPasskey(q, t.realmId, userId, p, name, ctx.now, ctx.policy);
    await stepRecorder(q, t.realmId, ctx, stepActor(userId)).audit('mfa.webauthn.enrolled', {
      category: 'security',
      subject: { type: 'user', id: userId },
      data: {
        transaction_id: t.id,
        passkey_id: id,
        aaguid: p.aaguid,
        attestation_trusted: p.attestationTrusted,
        recovery_codes: codes?.length ?? 0,
      },
    });
    await restoreAfterStrongFactor(q, ctx, userId);
    await mailFactorAdded(q, t, ctx, 'webauthn');
    return {
      tx: withFactor(t, p.userVerified ? 'hwk' : 'swk'),
      ...(codes ? { oneTime: { recovery_codes: codes } } : {}),
    };
  },
};
