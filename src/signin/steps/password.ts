// password {password, optional identifier} (spec doc 1, Authentication 3 and the Limits table).
// The hash is checked before the row lock; unknown accounts burn the same hash, and the engine
// pads every answer to security.min_auth_response.

import { NO_NUL } from '../../kernel/text.ts';
import { object, optional, string } from '../../platform/http/decode.ts';
import {
  findPasswordVerifier,
  findUserByIdentifier,
  identifierTypeOf,
  repepperPassword,
} from '../../users/index.ts';
import type { PasswordVerifier } from '../../users/password-hasher.ts';
import { refuseIdentifierType } from '../registration-policy.ts';
import { withFactor } from '../transitions.ts';
import { proofFailed } from './proof-failed.ts';
import type { Step } from './step.ts';

const decode = object({
  password: string({ minLength: 1, maxBytes: 1024 }),
  identifier: optional(string({ minLength: 1, maxBytes: 254, pattern: NO_NUL })),
});

interface Prepared {
  userId: string | null;
  identifier: string | null;
  valid: boolean;
  /**
   * The same password as the realm's Argon2id under the active pepper, when the stored verifier
   * was imported from another system or used another pepper version.
   */
  rehashed: { oldHash: string; verifier: PasswordVerifier } | null;
}

export const passwordStep: Step<{ password: string; identifier?: string }, Prepared> = {
  path: 'password',
  spendsBudgets: true,
  action: 'password',
  decode,
  padded: true,
  readsPasswordVerifier: true,
  // A password proof changes no fact: a wrong one is audited, a right one adds the factor (and may
  // re-pepper the verifier, which no fact reads). A typed identifier may name another account.
  keepsFacts: true,
  async prepare(app, t, body, _correlationId, known) {
    const identifier = body.identifier ?? t.identifier;
    let userId = body.identifier === undefined ? t.userId : null;
    if (body.identifier !== undefined) {
      userId =
        (await findUserByIdentifier(app.db, t.realmId, identifierTypeOf(body.identifier), body.identifier))
          ?.id ?? null;
    }
    // The transaction's own account: its verifier came with the transaction row.
    const verifier = !userId
      ? null
      : body.identifier === undefined && known.passwordVerifier !== undefined
        ? known.passwordVerifier
        : await findPasswordVerifier(app.db, t.realmId, userId);
    const valid = await app.hasher.verifyOrBurn(body.password, verifier);
    // Pepper rotation re-peppers a verifier at the account's next sign-in (spec doc 2,
    // Authentication 6; docs/security.md), and an imported verifier is replaced by the realm's
    // Argon2id (docs/migration.md); the new verifier is written in the step's transaction.
    const rehashed =
      valid && verifier && app.hasher.needsRehash(verifier)
        ? { oldHash: verifier.hash, verifier: await app.hasher.hash(body.password) }
        : null;
    return { userId, identifier, valid, rehashed };
  },
  async run(q, t, body, ctx, prepared) {
    // login.identifiers: a typed identifier of a type the realm leaves out is refused.
    if (body.identifier !== undefined) refuseIdentifierType(ctx.policy, 'identifier', body.identifier);
    const identified = { ...t, identifier: prepared.identifier, userId: prepared.userId };
    if (!prepared.valid || !prepared.userId) return proofFailed(q, identified, ctx, 'pwd');
    if (prepared.rehashed)
      await repepperPassword(
        q,
        t.realmId,
        prepared.userId,
        prepared.rehashed.oldHash,
        prepared.rehashed.verifier,
      );
    return { tx: withFactor(identified, 'pwd') };
  },
};
