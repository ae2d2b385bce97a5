// guest {} (registration.allow_guests): an account without identifiers or credentials, factor
// anon. Guests expire after lifecycle.guest_ttl_days without sign-in (worker, not yet built).
import { object } from '../../platform/http/decode.ts';
import { Problem } from '../../platform/http/problem.ts';
import { createUserInTx, markGuest } from '../../users/index.ts';
import { hasPrimary } from '../next-actions.ts';
import { withFactor } from '../transitions.ts';
import type { Step } from './step.ts';

export const guestStep: Step<Record<string, never>> = {
  path: 'guest',
  spendsBudgets: false,
  action: null, // any pending transaction without a primary factor, when the realm allows guests
  decode: object({}),
  async run(q, t, _body, ctx) {
    if (!ctx.facts.signup.allowGuests)
      throw new Problem(409, 'conflict', 'the realm does not allow guests', { error: 'guest_not_permitted' });
    if (hasPrimary(t) || t.userId !== null)
      throw new Problem(409, 'conflict', 'the transaction already has an account');
    const call = {
      realmId: t.realmId,
      actor: { type: 'system' as const, id: null },
      correlationId: ctx.correlationId,
      now: ctx.now,
    };
    const user = await createUserInTx(q, call, { createdVia: 'guest' }, null);
    await markGuest(q, t.realmId, user.id);
    return { tx: withFactor({ ...t, userId: user.id }, 'anon') };
  },
};
