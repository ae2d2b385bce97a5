// Passkey sign-in: webauthn/options {} returns state.webauthn, then webauthn/verify {credential}
// (spec doc 1, endpoint table). Before anyone is identified the options ask for a discoverable
// passkey (passwordless, conditional UI) and the passkey names the account; as a second factor
// they list the account's passkeys. The assertion is checked before the row lock (prepare);
// inside the transaction the ceremony is consumed once and the counter moves forward only. A
// refused assertion is a proof failure audited mfa.webauthn.failed (case rule 2).
import {
  type AuthenticationExpected,
  assertedCredentialId,
  authenticationOptions,
  CEREMONY_TTL_MS,
  checkAssertion,
  consumeCeremony,
  findCeremony,
  findPasskeyByCredentialId,
  insertCeremony,
  listPasskeys,
  lockPasskey,
  recordPasskeyUse,
  webauthnPolicy,
} from '../../mfa/index.ts';
import { object, unknownJson } from '../../platform/http/decode.ts';
import { problem } from '../../platform/http/problem.ts';
import { newId } from '../../platform/ids.ts';
import { currentPolicy } from '../../realms/index.ts';
import { lockUser } from '../../users/index.ts';
import { hasPrimary, phishingResistantDemanded } from '../next-actions.ts';
import { withFactor } from '../transitions.ts';
import { restoreAfterStrongFactor } from './account-effects.ts';
import { proofFailed } from './proof-failed.ts';
import { type Step, stepActor, stepRecorder } from './step.ts';

/** A credential as the browser's toJSON() gives it; its size is bounded, its shape checked later. */
export const credentialBody = { credential: unknownJson({ maxBytes: 64 * 1024 }) };

export const webauthnOptionsStep: Step<Record<string, never>> = {
  path: 'webauthn/options',
  spendsBudgets: false,
  action: 'webauthn',
  decode: object({}),
  async run(q, t, _body, ctx) {
    const policy = webauthnPolicy(ctx.policy, ctx.app.config.server.publicOrigin);
    // Second factor: the account's passkeys. Primary: discoverable, so nothing about the account shows.
    const allow = hasPrimary(t) && t.userId ? await listPasskeys(q, t.realmId, t.userId) : null;
    const { options, expected } = await authenticationOptions(policy, allow, {
      requireUserVerification: phishingResistantDemanded(t, ctx.facts),
    });
    await insertCeremony(
      q,
      t.realmId,
      {
        id: newId('wac', ctx.now.getTime()),
        kind: 'authentication',
        transactionId: t.id,
        userId: null,
        challenge: options.challenge,
        expected,
        expiresAt: new Date(ctx.now.getTime() + CEREMONY_TTL_MS),
      },
      ctx.now,
    );
    return { tx: t, webauthn: options as unknown as Record<string, unknown> };
  },
};

type Checked =
  | { ok: true; ceremonyId: string; passkeyId: string; counter: number; userVerified: boolean }
  | { ok: false; ceremonyId: string; reason: string; passkeyId: string | null; aaguid: string | null };

export const webauthnVerifyStep: Step<{ credential: unknown }, Checked> = {
  path: 'webauthn/verify',
  spendsBudgets: true,
  action: 'webauthn',
  decode: object(credentialBody),
  async prepare(app, t, body) {
    const now = app.clock.now();
    const ceremony = await findCeremony<AuthenticationExpected>(
      app.db,
      t.realmId,
      'authentication',
      { transactionId: t.id, userId: null },
      now,
    );
    if (!ceremony) throw problem.conflict('no passkey ceremony is pending; request webauthn/options first');
    const failed = (reason: string, p: { id: string; aaguid: string } | null = null): Checked => ({
      ok: false,
      ceremonyId: ceremony.id,
      reason,
      passkeyId: p?.id ?? null,
      aaguid: p?.aaguid ?? null,
    });
    const id = assertedCredentialId(body.credential);
    const stored = id ? await findPasskeyByCredentialId(app.db, t.realmId, id) : null;
    // An identified account (known or not) must be the passkey's own account.
    const identified = (t.userId ?? t.identifier) !== null;
    if (!stored || (identified && stored.user_id !== t.userId)) return failed('unknown_credential');
    const policy = webauthnPolicy(await currentPolicy(app.db, t.realmId), app.config.server.publicOrigin);
    const r = await checkAssertion(body.credential, ceremony.challenge, ceremony.expected, stored, policy, {
      identified,
    });
    if (!r.ok) return failed(r.refusal, stored);
    return {
      ok: true,
      ceremonyId: ceremony.id,
      passkeyId: stored.id,
      counter: r.counter,
      userVerified: r.userVerified,
    };
  },
  async run(q, t, _body, ctx, checked) {
    if (!(await consumeCeremony(q, t.realmId, checked.ceremonyId)))
      throw problem.conflict('the passkey ceremony was answered already; request webauthn/options again');
    const row = checked.ok ? await lockPasskey(q, t.realmId, checked.passkeyId) : null;
    const stale =
      row !== null &&
      checked.ok &&
      (checked.counter > 0 || Number(row.sign_count) > 0) &&
      checked.counter <= Number(row.sign_count);
    if (!checked.ok || !row || stale) {
      const reason = checked.ok ? 'counter_not_increased' : checked.reason;
      const userId = row?.user_id ?? t.userId;
      await stepRecorder(q, t.realmId, ctx, stepActor(userId)).audit('mfa.webauthn.failed', {
        category: 'security',
        outcome: 'failure',
        reason,
        ...(userId ? { subject: { type: 'user', id: userId } } : {}),
        data: {
          transaction_id: t.id,
          reason,
          ...(checked.ok
            ? { passkey_id: checked.passkeyId }
            : checked.passkeyId
              ? { passkey_id: checked.passkeyId, aaguid: checked.aaguid }
              : {}),
        },
      });
      return proofFailed(q, t, ctx, 'webauthn');
    }
    await recordPasskeyUse(q, t.realmId, row.id, checked.counter, ctx.now);
    const state = t.userId ? ctx.facts.user?.state : (await lockUser(q, t.realmId, row.user_id))?.state;
    await restoreAfterStrongFactor(q, ctx, row.user_id, state);
    // A user-verified passkey is possession and a second factor at once (hwk); without user
    // verification it is possession only (swk).
    return { tx: withFactor({ ...t, userId: row.user_id }, checked.userVerified ? 'hwk' : 'swk') };
  },
};
