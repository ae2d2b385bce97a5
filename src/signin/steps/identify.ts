// identify {identifier}: remembers who is signing in. An unknown identifier is accepted the same
// way as a known one, so this step never tells whether an account exists. An identifier of a type
// login.identifiers leaves out is refused whatever account it names.

import { NO_NUL } from '../../kernel/text.ts';
import { object, string } from '../../platform/http/decode.ts';
import { findUserByIdentifier, identifierTypeOf } from '../../users/index.ts';
import { refuseIdentifierType } from '../registration-policy.ts';
import type { Step } from './step.ts';

const decode = object({ identifier: string({ minLength: 1, maxBytes: 254, pattern: NO_NUL }) });

export const identifyStep: Step<{ identifier: string }> = {
  path: 'identify',
  spendsBudgets: false,
  action: 'identify',
  decode,
  async run(q, t, body, ctx) {
    refuseIdentifierType(ctx.policy, 'identifier', body.identifier);
    const user = await findUserByIdentifier(q, t.realmId, identifierTypeOf(body.identifier), body.identifier);
    return { tx: { ...t, identifier: body.identifier, userId: user?.id ?? null } };
  },
};
