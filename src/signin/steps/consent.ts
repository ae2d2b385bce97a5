// consent {approve, scopes}: the user grants some or all requested scopes; refusing ends the
// transaction with access_denied. A grant is remembered for later requests of the same client.
import { array, boolean, object, optional, string } from '../../platform/http/decode.ts';
import { problem } from '../../platform/http/problem.ts';
import { fail } from '../transitions.ts';
import { type Step, stepActor, stepRecorder } from './step.ts';

const decode = object({
  approve: boolean(),
  scopes: optional(array(string({ minLength: 1, maxLength: 128 }), { maxItems: 50 })),
});

export const consentStep: Step<{ approve: boolean; scopes?: string[] }> = {
  path: 'consent',
  spendsBudgets: false,
  action: 'consent',
  decode,
  async run(q, t, body, ctx) {
    if (!body.approve) return { tx: fail(t, 'access_denied') };
    const granted = [...new Set(body.scopes ?? t.scopes)];
    const extra = granted.filter((s) => !t.scopes.includes(s));
    if (extra.length > 0) {
      const detail = `scopes that were not requested: ${extra.join(' ')}`;
      throw problem.validation([{ field: 'scopes', code: 'not_allowed', detail }], detail);
    }
    const userId = t.userId as string; // consent comes after primary authentication
    await q.query(
      `insert into consents (realm_id, user_id, client_id, scopes, created_at, updated_at)
       values ($1, $2, $3, $4, $5, $5)
       on conflict (realm_id, user_id, client_id) do update
         set scopes = (select array_agg(distinct s) from unnest(consents.scopes || excluded.scopes) s),
             updated_at = excluded.updated_at`,
      [t.realmId, userId, t.clientId, granted, ctx.now],
    );
    await stepRecorder(q, t.realmId, ctx, stepActor(userId)).audit('consent.granted', {
      category: 'privacy',
      subject: { type: 'user', id: userId },
      target: { type: 'client', id: t.clientId },
      data: { scopes: granted, transaction_id: t.id },
    });
    return { tx: { ...t, consentScopes: granted } };
  },
};
