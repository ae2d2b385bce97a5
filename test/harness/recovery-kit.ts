// A recovery-restricted session obtained for real: an account with TOTP and recovery codes, a
// headless sign-in that spends a recovery code instead of the TOTP code, and the code redeemed at
// the token endpoint for one audience (spec doc 1, "Account states" and Errors, case rule 1).
import type { RealmRow } from '../../src/realms/realm.repo.ts';
import { assignRealmRole, findRoleByName } from '../../src/roles/builtin-roles.repo.ts';
import { BUILTIN_ROLES } from '../../src/roles/permissions.ts';
import type { Harness } from './harness.ts';
import { type JsonResponse, json } from './signin-driver.ts';
import {
  codeOf,
  enrollTotp,
  type MovableClock,
  movableClock,
  nextTotpStep,
  PASSWORD,
  passwordSignIn,
  REDIRECT,
  signinSetup,
  totpCode,
} from './signin-kit.ts';
import { clientSecret, grantResources, oauthPost } from './token-kit.ts';

type Creds = { clientId: string; secret: string };

export interface RecoverySetup {
  h: Harness;
  realm: RealmRow;
  userId: string;
  clock: MovableClock;
  creds: Creds;
  /** The TOTP secret of alice@example.com. */
  secret: string;
  /** Unspent recovery codes; each sign-in below takes one. */
  recoveryCodes: string[];
  adminAudience: string;
  accountAudience: string;
}

/**
 * A realm whose 'web-app' client may ask for the admin and account audiences, and the user
 * alice@example.com holding realm-admin, with TOTP enrolled and her recovery codes in hand.
 */
export async function recoverySetup(t: Parameters<typeof signinSetup>[0]): Promise<RecoverySetup> {
  const { h, realm, client, user, clock } = await signinSetup(t, { clock: movableClock() });
  await grantResources(h, realm, client, ['builtin:admin', 'builtin:account']);
  await h.ctx.db.tx(async (q) => {
    const role = await findRoleByName(q, realm.id, BUILTIN_ROLES.realmAdmin.name);
    if (!role) throw new Error('no realm-admin role');
    await assignRealmRole(
      q,
      { realmId: realm.id, roleId: role.id, subjectType: 'user', subjectId: user.id, source: 'test' },
      clock.now(),
    );
  });
  const { secret, recoveryCodes } = await enrollTotp(h, realm, 'web-app', 'alice@example.com', clock);
  const origin = h.ctx.config.server.publicOrigin;
  return {
    h,
    realm,
    userId: user.id,
    clock,
    creds: { clientId: 'web-app', secret: await clientSecret(h, realm, client) },
    secret,
    recoveryCodes: [...recoveryCodes],
    adminAudience: `${origin}/api/v1/realms/${realm.name}`,
    accountAudience: `${origin}/api/v1/realms/${realm.name}/me`,
  };
}

/** A code for one audience from a headless sign-in whose second factor is `factor`. */
async function signInWith(
  s: RecoverySetup,
  audience: string,
  factor: 'totp' | 'recovery-code',
): Promise<{ code: string; verifier: string }> {
  const { tx, state } = await passwordSignIn(s.h, s.realm.name, 'web-app', 'alice@example.com', PASSWORD, {
    resource: [audience],
  });
  if (state.body.status !== 'pending')
    throw new Error(`no second factor asked: ${JSON.stringify(state.body)}`);
  let proof: string;
  if (factor === 'totp') {
    nextTotpStep(s.clock);
    proof = totpCode(s.secret, s.clock.now());
  } else {
    const next = s.recoveryCodes.shift();
    if (!next) throw new Error('no recovery code left');
    proof = next;
  }
  const done = await tx.step(factor, { code: proof });
  if (done.body.status !== 'completed')
    throw new Error(`sign-in not completed: ${JSON.stringify(done.body)}`);
  return { code: codeOf(done.body.redirect_to), verifier: tx.verifier };
}

/** Redeems a sign-in's code for `audience`; the token response as the endpoint gave it. */
export async function redeem(
  s: RecoverySetup,
  signedIn: { code: string; verifier: string },
  audience: string,
): Promise<JsonResponse> {
  return oauthPost(
    s.h,
    s.realm,
    'token',
    {
      grant_type: 'authorization_code',
      code: signedIn.code,
      redirect_uri: REDIRECT,
      code_verifier: signedIn.verifier,
      resource: audience,
    },
    s.creds,
  );
}

/** A sign-in with a recovery code (the session is recovery-restricted), its code not yet redeemed. */
export const recoveryCodeSignIn = (s: RecoverySetup, audience: string) =>
  signInWith(s, audience, 'recovery-code');

/** A sign-in with the TOTP code (an unrestricted MFA session), its code not yet redeemed. */
export const totpSignIn = (s: RecoverySetup, audience: string) => signInWith(s, audience, 'totp');

/** The token response of a sign-in by `factor`, redeemed for `audience`; throws unless 200. */
export async function tokensFor(
  s: RecoverySetup,
  audience: string,
  factor: 'totp' | 'recovery-code',
): Promise<{ access_token: string; refresh_token: string }> {
  const res = await redeem(s, await signInWith(s, audience, factor), audience);
  if (res.status !== 200) throw new Error(`token request failed: ${JSON.stringify(res.body)}`);
  return res.body;
}

/** A refresh at the token endpoint for `audience`. */
export const refresh = (s: RecoverySetup, refreshToken: string, audience: string) =>
  oauthPost(
    s.h,
    s.realm,
    'token',
    { grant_type: 'refresh_token', refresh_token: refreshToken, resource: audience },
    s.creds,
  );

/** One request to /api/v1/realms/{realm}{path} with a bearer token and an optional JSON body. */
export async function bearer(
  s: RecoverySetup,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<JsonResponse> {
  return json(
    await s.h.get(`/api/v1/realms/${s.realm.name}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
}
