// account {continue}: answers select_account (prompt=select_account with a live SSO session).
// Continuing keeps the session's account; declining starts a fresh sign-in in this transaction.
import { boolean, object } from '../../platform/http/decode.ts';
import type { Step } from './step.ts';

export const accountStep: Step<{ continue: boolean }> = {
  path: 'account',
  spendsBudgets: false,
  action: 'select_account',
  decode: object({ continue: boolean() }),
  run: async (_q, t, body) => ({
    tx: body.continue
      ? { ...t, accountConfirmed: true }
      : {
          ...t,
          accountConfirmed: true,
          sessionId: null,
          userId: null,
          identifier: null,
          completedFactors: [],
        },
  }),
};
