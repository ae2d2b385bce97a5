// A registration for an email address that already has an account (ASVS 5.0 V6.3.8;
// docs/registration.md): the answer must not tell whether the address is taken. The transaction
// goes where a new account would go and stops there for good: at email verification, whose code
// is written but never sent and so never works, or held for an administrator's approval. The
// owner of the address is told by mail instead. The work matches a real registration's: the
// password was hashed before (prepare), and a row is written and a message queued here.
import { recorder } from '../../audit/index.ts';
import { enqueueNotification, localeOf } from '../../notifications/index.ts';
import { spendBudgets } from '../../platform/abuse-budget.ts';
import type { Tx } from '../../platform/db/db.ts';
import { brandNameOf } from '../../realms/index.ts';
import { asciiLower } from '../../users/identifiers.ts';
import { requireEmailVerification } from '../registration-policy.ts';
import type { RegistrationDecoy, SigninTx } from '../transaction.ts';
import { withFactor } from '../transitions.ts';
import type { StepContext, StepOutcome } from './step.ts';

/** Notices to one address an hour: a registration form must not become a way to flood a mailbox. */
const NOTICES_PER_ADDRESS_HOUR = 3;

/**
 * Where a new account would stop before anything tells it apart, or null when nothing would stop
 * it: a realm that neither verifies addresses nor holds registrations signs a new account in at
 * once, so it cannot hide that an address is taken.
 */
export function decoyFor(ctx: StepContext, displayName: string | null): RegistrationDecoy | null {
  const verifyEmail = requireEmailVerification(ctx.policy);
  if (!verifyEmail && !ctx.facts.signup.requireApproval) return null;
  return { displayName, verifyEmail };
}

/** The owner hears of the attempt (at most a few times an hour), and the audit trail keeps it. */
async function tellOwner(q: Tx, t: SigninTx, ctx: StepContext, email: string, ownerId: string) {
  const budget = {
    bucket: `registration:notice:${t.realmId}:${asciiLower(email)}`,
    limit: NOTICES_PER_ADDRESS_HOUR,
    windowMs: 3_600_000,
  };
  const keyring = ctx.app.keyring;
  const notified = keyring !== null && (await spendBudgets(q, [budget], ctx.now)).ok;
  if (notified)
    await enqueueNotification(
      q,
      keyring,
      {
        realmId: t.realmId,
        channel: 'email',
        template: 'account_exists',
        locale: localeOf(t.uiLocales),
        to: email,
        vars: { realm: brandNameOf(ctx.realm, ctx.policy) },
      },
      ctx.now,
    );
  await recorder(q, {
    realmId: t.realmId,
    actor: { type: 'system', id: null },
    correlationId: ctx.correlationId,
    now: ctx.now,
  }).audit('signin.registration_address_taken', {
    category: 'security',
    subject: { type: 'user', id: ownerId },
    data: { transaction_id: t.id, owner_notified: notified },
  });
}

export async function registerTakenAddress(
  q: Tx,
  t: SigninTx,
  ctx: StepContext,
  input: { email: string; withPassword: boolean; decoy: RegistrationDecoy; ownerId: string },
): Promise<StepOutcome> {
  await tellOwner(q, t, ctx, input.email, input.ownerId);
  const standIn = { ...t, identifier: input.email, registrationDecoy: input.decoy };
  return { tx: input.withPassword ? withFactor(standIn, 'pwd') : standIn };
}
