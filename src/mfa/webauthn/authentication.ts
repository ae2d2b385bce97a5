// Passkey sign-in (spec doc 1, transaction steps webauthn/options and webauthn/verify; Passkey
// policy 2; case rule 2): request options, and the checks of an assertion. A counter that does
// not move forward, a model the allow or block list refuses, a synced passkey where the realm
// allows none, a user handle that is not the passkey's account (WebAuthn L3 section 7.2 step 6),
// or any extension output (none are requested) fails the proof.
import {
  type AuthenticationResponseJSON,
  generateAuthenticationOptions,
  type PublicKeyCredentialRequestOptionsJSON,
  verifyAuthenticationResponse,
} from '@simplewebauthn/server';
import { unrequestedOutputs } from './extension-rules.ts';
import type { PasskeyRow } from './passkeys.repo.ts';
import './library-settings.ts';
import { CEREMONY_TTL_MS, userHandleOf } from './registration.ts';
import { aaguidAllowed, type UserVerification, type WebauthnPolicy } from './webauthn-policy.ts';

export interface AuthenticationExpected {
  [k: string]: unknown;
  rpId: string;
  origins: string[];
  userVerification: UserVerification;
}

/**
 * `allow` null: discoverable credentials (passwordless, conditional UI), which also tells nobody
 * whether an account has passkeys.
 */
export async function authenticationOptions(
  policy: WebauthnPolicy,
  allow: readonly PasskeyRow[] | null,
  opts: { requireUserVerification?: boolean } = {},
): Promise<{ options: PublicKeyCredentialRequestOptionsJSON; expected: AuthenticationExpected }> {
  const userVerification = opts.requireUserVerification ? 'required' : policy.userVerification;
  const options = await generateAuthenticationOptions({
    rpID: policy.rpId,
    timeout: CEREMONY_TTL_MS,
    userVerification,
    ...(allow
      ? { allowCredentials: allow.map((p) => ({ id: p.credential_id, transports: p.transports })) }
      : {}),
  });
  return { options, expected: { rpId: policy.rpId, origins: policy.origins, userVerification } };
}

/** The credential id an assertion names (to find its row), or null when it names none. */
export function assertedCredentialId(credential: unknown): string | null {
  const id = (credential as { id?: unknown } | null)?.id;
  return typeof id === 'string' && id.length > 0 && id.length <= 1366 ? id : null;
}

export type AssertionRefusal = 'invalid_credential' | 'authenticator_not_allowed' | 'user_handle_mismatch';

/**
 * WebAuthn L3 section 7.2 step 6: the user handle an assertion carries must be the handle of the
 * account that holds the credential. When the account was identified before the ceremony the
 * handle may be absent (the credential was already checked to be that account's); when the
 * assertion is what names the account (a discoverable passkey) it must be present.
 */
export function userHandleMatches(credential: unknown, ownerId: string, identified: boolean): boolean {
  const handle = (credential as { response?: { userHandle?: unknown } } | null)?.response?.userHandle;
  if (handle === undefined || handle === null || handle === '') return identified;
  if (typeof handle !== 'string') return false;
  const expected = Buffer.from(userHandleOf(ownerId)).toString('base64url');
  // Base64url with or without padding: compare the decoded bytes' canonical form.
  return Buffer.from(handle, 'base64url').toString('base64url') === expected;
}

export type AssertionCheck =
  | { ok: true; counter: number; userVerified: boolean; backedUp: boolean }
  | { ok: false; refusal: AssertionRefusal; detail: string };

export async function checkAssertion(
  credential: unknown,
  challenge: string,
  expected: AuthenticationExpected,
  stored: PasskeyRow,
  policy: WebauthnPolicy,
  opts: { identified: boolean },
): Promise<AssertionCheck> {
  if (!userHandleMatches(credential, stored.user_id, opts.identified))
    return {
      ok: false,
      refusal: 'user_handle_mismatch',
      detail: "the assertion's user handle is not the passkey's account",
    };
  if (!aaguidAllowed(policy, stored.aaguid))
    return {
      ok: false,
      refusal: 'authenticator_not_allowed',
      detail: 'this authenticator model is not allowed',
    };
  try {
    const r = await verifyAuthenticationResponse({
      response: credential as AuthenticationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: expected.origins,
      expectedRPID: expected.rpId,
      credential: {
        id: stored.credential_id,
        publicKey: new Uint8Array(stored.public_key),
        counter: Number(stored.sign_count),
        transports: stored.transports,
      },
      requireUserVerification: expected.userVerification === 'required',
    });
    if (!r.verified)
      return { ok: false, refusal: 'invalid_credential', detail: 'the assertion did not verify' };
    const info = r.authenticationInfo;
    const clientOutputs = (credential as { clientExtensionResults?: unknown }).clientExtensionResults;
    const extra = unrequestedOutputs([], clientOutputs, info.authenticatorExtensionResults);
    if (extra.length > 0)
      return {
        ok: false,
        refusal: 'invalid_credential',
        detail: `unrequested extension outputs: ${extra.join(', ')}`,
      };
    if (!policy.allowSynced && (stored.backup_eligible || info.credentialDeviceType === 'multiDevice'))
      return { ok: false, refusal: 'authenticator_not_allowed', detail: 'synced passkeys are not allowed' };
    return {
      ok: true,
      counter: info.newCounter,
      userVerified: info.userVerified,
      backedUp: info.credentialBackedUp,
    };
  } catch (e) {
    return { ok: false, refusal: 'invalid_credential', detail: (e as Error).message };
  }
}
