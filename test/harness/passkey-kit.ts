// Passkey sign-in drivers for the integration tests: a realm set up for passkeys, enrollment in a
// transaction with the software authenticator, and passwordless or second-factor sign-in.
import type { TestContext } from 'node:test';
import type { RealmRow } from '../../src/realms/realm.repo.ts';
import type { Harness } from './harness.ts';
import { type HeadlessTx, type JsonResponse, startHeadless } from './signin-driver.ts';
import { movableClock, passwordSignIn, REDIRECT, signinSetup } from './signin-kit.ts';
import { type CreateOptions, type GetOptions, SoftAuthenticator } from './soft-authenticator.ts';

export async function passkeySetup(
  t: TestContext,
  webauthn: Record<string, unknown> = {},
  extra: Record<string, unknown> = {},
) {
  const s = await signinSetup(t, { clock: movableClock() });
  await s.h.setPolicy(s.realm, { mfa: { requirement: 'required' }, webauthn, ...extra });
  const authenticator = new SoftAuthenticator(s.h.ctx.config.server.publicOrigin);
  return { ...s, authenticator };
}

/** Password sign-in that must enroll a second factor, answered with a passkey registration. */
export async function enrollInTransaction(
  h: Harness,
  realm: RealmRow,
  authenticator: SoftAuthenticator,
  create: CreateOptions = {},
  email = 'alice@example.com',
): Promise<{ tx: HeadlessTx; options: JsonResponse; registered: JsonResponse }> {
  const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', email);
  if (!state.body.next_actions?.some((a: { type: string }) => a.type === 'enroll_webauthn'))
    throw new Error(`enroll_webauthn not offered: ${JSON.stringify(state.body)}`);
  const options = await tx.step('webauthn/registration-options', {});
  if (options.status !== 200) throw new Error(`registration-options: ${JSON.stringify(options.body)}`);
  const credential = await authenticator.create(options.body.webauthn, create);
  const registered = await tx.step('webauthn/register', { credential, name: 'Test key' });
  return { tx, options, registered };
}

/** webauthn/options then webauthn/verify in `tx` with the authenticator's answer. */
export async function answerWithPasskey(
  tx: HeadlessTx,
  authenticator: SoftAuthenticator,
  get: GetOptions = {},
): Promise<{ options: JsonResponse; verified: JsonResponse }> {
  const options = await tx.step('webauthn/options', {});
  if (options.status !== 200) throw new Error(`webauthn/options: ${JSON.stringify(options.body)}`);
  const credential = await authenticator.get(options.body.webauthn, get);
  return { options, verified: await tx.step('webauthn/verify', { credential }) };
}

export const startSignIn = (h: Harness, realm: RealmRow, extra: Record<string, unknown> = {}) =>
  startHeadless(h, realm.name, 'web-app', REDIRECT, extra);
