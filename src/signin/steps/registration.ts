// registration (intent register; POST .../{id}/registration and POST /registrations with
// transaction_id): creates the account in the transaction's realm under registration.mode, with
// the password rules, the profile attributes the policy lets users edit, and email verification
// when registration.require_email_verification (default true) asks for it. Event user.created
// with created_via registration. An address that has an account gets the same answer, and its
// owner a mail (registration-decoy.ts); a taken username is refused (409).
import { beforeRegistration } from '../../hooks/index.ts';
import { NO_NUL } from '../../kernel/text.ts';
import { object, optional, record, string } from '../../platform/http/decode.ts';
import type { FieldError } from '../../platform/http/problem.ts';
import { Problem, problem } from '../../platform/http/problem.ts';
import { asciiLower } from '../../users/identifiers.ts';
import {
  createUserInTx,
  findUserByIdentifier,
  mergeUserAttributes,
  setUserState,
  weakPasswordError,
} from '../../users/index.ts';
import type { PasswordVerifier } from '../../users/password-hasher.ts';
import { MIN_PASSWORD_LENGTH } from '../../users/password-rules.ts';
import { holdRegistration } from '../registration.repo.ts';
import {
  allowedDomains,
  profileAttributes,
  requireEmailVerification,
  signInIdentifiers,
} from '../registration-policy.ts';
import type { SigninDeps } from '../signin.deps.ts';
import type { SigninTx } from '../transaction.ts';
import { withFactor } from '../transitions.ts';
import { decoyFor, registerTakenAddress } from './registration-decoy.ts';
import type { Step } from './step.ts';

export interface RegistrationBody {
  email: string;
  password?: string;
  displayName?: string;
  username?: string;
  attributes?: Record<string, string>;
}

export const decodeRegistration = object({
  email: string({ minLength: 3, maxBytes: 254, pattern: NO_NUL }),
  password: optional(string({ minLength: 1, maxBytes: 1024 })),
  display_name: optional(string({ minLength: 1, maxLength: 200, pattern: NO_NUL })),
  username: optional(string({ minLength: 1, maxLength: 64, pattern: NO_NUL })),
  attributes: optional(record(string({ maxBytes: 1024, pattern: NO_NUL }), { maxEntries: 50 })),
});

/** A hook's refusal ends the registration before anything is created. */
async function registrationHooks(app: SigninDeps, t: SigninTx, body: RegistrationBody): Promise<void> {
  const verdict = await beforeRegistration(app.hooks, {
    realmId: t.realmId,
    clientId: t.clientId,
    data: {
      transaction_id: t.id,
      email: body.email,
      username: body.username ?? null,
      display_name: body.displayName ?? null,
    },
  });
  if (verdict.kind === 'deny')
    throw new Problem(403, 'forbidden', verdict.reason ?? 'the realm does not accept this registration');
  if (verdict.kind === 'unavailable')
    throw problem.unavailable('a registration hook of the realm did not answer; no account was created');
}

export const registrationStep: Step<RegistrationBody, PasswordVerifier | null> = {
  path: 'registration',
  // It may mail the owner of a taken address: a send like any other.
  spendsBudgets: true,
  action: 'register',
  decode: decodeRegistration,
  // A taken address and a new one answer alike, in time too.
  padded: true,
  // The realm's before_registration hooks, then Argon2, before the row lock and outside any
  // transaction (docs/hooks.md).
  prepare: async (app, t, body) => {
    await registrationHooks(app, t, body);
    return body.password !== undefined && body.password.length >= MIN_PASSWORD_LENGTH
      ? app.hasher.hash(body.password)
      : null;
  },
  async run(q, t, body, ctx, verifier) {
    const errors: FieldError[] = [];
    const mode = ctx.facts.signup.mode;
    const domain = asciiLower(body.email.slice(body.email.lastIndexOf('@') + 1));
    if (mode === 'domain_restricted' && !allowedDomains(ctx.policy).includes(domain))
      errors.push({ field: 'email', code: 'domain_not_allowed' });
    // login.identifiers: a username only where users sign in with one.
    if (body.username !== undefined && !signInIdentifiers(ctx.policy).includes('username'))
      errors.push({ field: 'username', code: 'not_allowed' });
    if (ctx.facts.methods.password && body.password === undefined)
      errors.push({ field: 'password', code: 'required' });
    if (body.password !== undefined && body.password.length < MIN_PASSWORD_LENGTH)
      errors.push({ field: 'password', code: 'too_short' });
    else if (body.password !== undefined) {
      const context = [body.email, body.username ?? ''];
      const weak = await weakPasswordError(ctx.policy, 'password', body.password, context);
      if (weak) errors.push(weak);
    }
    const editable = new Set(
      profileAttributes(ctx.policy)
        .filter((a) => a.userEditable)
        .map((a) => a.name),
    );
    for (const name of Object.keys(body.attributes ?? {}))
      if (!editable.has(name)) errors.push({ field: `attributes.${name}`, code: 'not_editable' });
    if (errors.length > 0) throw problem.validation(errors);
    // An account that must confirm its address and cannot be mailed would be stuck unverified.
    if (requireEmailVerification(ctx.policy) && !ctx.facts.methods.mail)
      throw problem.unavailable('registration needs email verification, and no mail transport is configured');

    // A username is chosen to be seen: a taken one is refused so that another can be picked.
    if (body.username !== undefined && (await findUserByIdentifier(q, t.realmId, 'username', body.username)))
      throw new Problem(409, 'conflict', 'this username is taken');
    const owner = await findUserByIdentifier(q, t.realmId, 'email', body.email);
    const decoy = owner ? decoyFor(ctx, body.displayName ?? null) : null;
    if (owner && decoy)
      return registerTakenAddress(q, t, ctx, {
        email: body.email,
        withPassword: verifier !== null,
        decoy,
        ownerId: owner.id,
      });

    const call = {
      realmId: t.realmId,
      actor: { type: 'system' as const, id: null },
      correlationId: ctx.correlationId,
      now: ctx.now,
    };
    let user: Awaited<ReturnType<typeof createUserInTx>>;
    try {
      user = await createUserInTx(
        q,
        call,
        {
          email: body.email,
          ...(body.username !== undefined ? { username: body.username } : {}),
          ...(body.displayName !== undefined ? { displayName: body.displayName } : {}),
          emailVerified: false,
          createdVia: 'registration',
        },
        verifier,
      );
    } catch (e) {
      // Invalid identifiers come back as field errors; a taken address as a conflict.
      if (e instanceof Problem && e.status === 409)
        throw new Problem(409, 'conflict', 'an account with this email address or username exists');
      throw e;
    }
    if (body.attributes && Object.keys(body.attributes).length > 0)
      await mergeUserAttributes(q, t.realmId, user.id, body.attributes, ctx.now);
    if (requireEmailVerification(ctx.policy))
      await setUserState(q, t.realmId, user.id, 'pending_verification', ctx.now);
    if (ctx.facts.signup.requireApproval) await holdRegistration(q, t.realmId, user.id, ctx.now);
    const registered = { ...t, userId: user.id, identifier: body.email };
    return { tx: verifier ? withFactor(registered, 'pwd') : registered };
  },
};
