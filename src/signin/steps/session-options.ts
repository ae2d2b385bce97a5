// Steps allowed at any time while pending: cancel, resume, remember-me and transient.
import { boolean, literal, object } from '../../platform/http/decode.ts';
import { cancel } from '../transitions.ts';
import { type Step, stepActor, stepRecorder } from './step.ts';

const empty = object({});

export const cancelStep: Step<Record<string, never>> = {
  path: 'cancel',
  spendsBudgets: false,
  action: null,
  decode: empty,
  async run(q, t, _body, ctx) {
    await stepRecorder(q, t.realmId, ctx, stepActor(t.userId)).audit('signin.transaction.cancelled', {
      category: 'security',
      data: { transaction_id: t.id },
    });
    return { tx: cancel(t) };
  },
};

/** Re-evaluates the transaction after the user came back to it; changes nothing itself. */
export const resumeStep: Step<Record<string, never>> = {
  path: 'resume',
  spendsBudgets: false,
  action: null,
  decode: empty,
  run: async (_q, t) => ({ tx: t }),
};

/** Honoured only when the client allows it, and never for a transient sign-in. */
export const rememberMeStep: Step<{ remember: boolean }> = {
  path: 'remember-me',
  spendsBudgets: false,
  action: null,
  decode: object({ remember: boolean() }),
  run: async (_q, t, body, ctx) => ({
    tx: { ...t, rememberMe: body.remember && ctx.client.allow_remember_me && !t.transient },
  }),
};

/** A browser-session cookie, at most an hour, and no refresh token (offline_access is dropped). */
export const transientStep: Step<{ transient: true }> = {
  path: 'transient',
  spendsBudgets: false,
  action: null,
  decode: object({ transient: literal(true) }),
  run: async (_q, t) => ({ tx: { ...t, transient: true, rememberMe: false } }),
};
