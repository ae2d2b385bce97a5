// Passkey registration (spec doc 1, Passkey policy): the creation options a browser gets, and
// the checks of its answer. The ceremony library checks the signature, challenge, origin and rp
// id; every trust and policy decision is made here. Used by the sign-in transaction
// (enroll_webauthn) and by /me.
import {
  generateRegistrationOptions,
  type PublicKeyCredentialCreationOptionsJSON,
  type RegistrationResponseJSON,
  verifyRegistrationResponse,
} from '@simplewebauthn/server';
import { decodeAttestationObject } from '@simplewebauthn/server/helpers';
import { type AttestationSource, evaluateAttestationTrust } from './attestation-trust.ts';
import { credProtectApplied, unrequestedOutputs } from './extension-rules.ts';
import type { FidoEntry } from './fido-blob.ts';
import type { PasskeyRow } from './passkeys.repo.ts';
import './library-settings.ts';
import {
  aaguidAllowed,
  CRED_PROTECT_LEVEL,
  type CredProtectPolicy,
  type UserVerification,
  type WebauthnPolicy,
} from './webauthn-policy.ts';

export const CEREMONY_TTL_MS = 5 * 60_000;

/** The WebAuthn user handle of an account: its id's UTF-8 bytes (the library sends them base64url). */
export const userHandleOf = (userId: string): Uint8Array<ArrayBuffer> => new TextEncoder().encode(userId);

/** ES256, EdDSA, RS256: what common authenticators offer. */
const ALGORITHMS = [-7, -8, -257];

export interface RegistrationExpected {
  [k: string]: unknown;
  rpId: string;
  origins: string[];
  userVerification: UserVerification;
  credProtect: CredProtectPolicy | null;
  enforceCredProtect: boolean;
}

export interface RegistrationUser {
  id: string;
  name: string;
  displayName: string;
}

export async function registrationOptions(
  policy: WebauthnPolicy,
  rpName: string,
  user: RegistrationUser,
  existing: readonly PasskeyRow[],
  opts: { requireUserVerification?: boolean } = {},
): Promise<{ options: PublicKeyCredentialCreationOptionsJSON; expected: RegistrationExpected }> {
  const userVerification = opts.requireUserVerification ? 'required' : policy.userVerification;
  const cp = policy.credentialProtection;
  // credProtect is not in the library's input types, hence the cast.
  const extensions = {
    credProps: true,
    ...(cp
      ? {
          credentialProtectionPolicy: cp,
          enforceCredentialProtectionPolicy: policy.enforceCredentialProtection,
        }
      : {}),
  } as Record<string, unknown>;
  const options = await generateRegistrationOptions({
    rpName,
    rpID: policy.rpId,
    userName: user.name,
    userID: userHandleOf(user.id),
    userDisplayName: user.displayName,
    timeout: CEREMONY_TTL_MS,
    attestationType:
      policy.attestation === 'none' ? 'none' : policy.attestation === 'enterprise' ? 'enterprise' : 'direct',
    excludeCredentials: existing.map((p) => ({ id: p.credential_id, transports: p.transports })),
    authenticatorSelection: { residentKey: 'required', requireResidentKey: true, userVerification },
    extensions,
    supportedAlgorithmIDs: ALGORITHMS,
  });
  // The library knows no "indirect"; the browser does.
  if (policy.attestation === 'indirect') options.attestation = 'indirect';
  return {
    options,
    expected: {
      rpId: policy.rpId,
      origins: policy.origins,
      userVerification,
      credProtect: cp,
      enforceCredProtect: policy.enforceCredentialProtection && cp !== null,
    },
  };
}

export type RegistrationRefusal =
  | 'invalid_credential'
  | 'authenticator_not_allowed'
  | 'attestation_not_trusted'
  | 'feature_disabled';

export interface RegisteredPasskey {
  credentialId: string;
  publicKey: Uint8Array;
  counter: number;
  transports: string[];
  aaguid: string;
  backupEligible: boolean;
  backupState: boolean;
  userVerified: boolean;
  format: string;
  attestationTrusted: boolean;
  attestationSource: AttestationSource | null;
  credentialProtection: string | null;
}

export type RegistrationCheck =
  | { ok: true; passkey: RegisteredPasskey }
  | { ok: false; refusal: RegistrationRefusal; detail: string };

export interface TrustSources {
  /** Root certificates of the realm's trusted authenticator with this AAGUID, if any. */
  realmRoots(aaguid: string): Promise<string[] | null>;
  /** Whether the realm lists any trusted authenticator. */
  realmHasAny(): Promise<boolean>;
  /** The operator's metadata entries trust may use (none once the BLOB expired). */
  operator: ReadonlyMap<string, FidoEntry>;
  /** Whether the operator's metadata exists at all, expired or not. */
  operatorExists: boolean;
}

const refuse = (refusal: RegistrationRefusal, detail: string): RegistrationCheck => ({
  ok: false,
  refusal,
  detail,
});

export async function checkRegistration(
  credential: unknown,
  challenge: string,
  expected: RegistrationExpected,
  policy: WebauthnPolicy,
  trust: TrustSources,
  now: Date,
): Promise<RegistrationCheck> {
  let info: Awaited<ReturnType<typeof verifyRegistrationResponse>>['registrationInfo'];
  try {
    const r = await verifyRegistrationResponse({
      response: credential as RegistrationResponseJSON,
      expectedChallenge: challenge,
      expectedOrigin: expected.origins,
      expectedRPID: expected.rpId,
      requireUserPresence: true,
      requireUserVerification: expected.userVerification === 'required',
      supportedAlgorithmIDs: ALGORITHMS,
    });
    if (!r.verified) return refuse('invalid_credential', 'the credential did not verify');
    info = r.registrationInfo;
  } catch (e) {
    return refuse('invalid_credential', `the credential did not verify: ${(e as Error).message}`);
  }
  const requested = ['credProps', ...(expected.credProtect ? ['credProtect'] : [])];
  const clientOutputs = (credential as { clientExtensionResults?: unknown }).clientExtensionResults;
  const extra = unrequestedOutputs(requested, clientOutputs, info.authenticatorExtensionResults);
  if (extra.length > 0)
    return refuse('invalid_credential', `unrequested extension outputs: ${extra.join(', ')}`);
  const applied = credProtectApplied(info.authenticatorExtensionResults);
  if (
    expected.enforceCredProtect &&
    expected.credProtect &&
    applied < CRED_PROTECT_LEVEL[expected.credProtect]
  )
    return refuse('authenticator_not_allowed', 'the authenticator did not apply credential protection');
  const aaguid = info.aaguid.toLowerCase();
  if (!aaguidAllowed(policy, aaguid))
    return refuse('authenticator_not_allowed', 'this authenticator model is not allowed');
  if (!policy.allowSynced && info.credentialDeviceType === 'multiDevice')
    return refuse('authenticator_not_allowed', 'synced passkeys are not allowed');

  const attestation = decodeAttestationObject(info.attestationObject);
  const x5c = attestation.get('attStmt').get('x5c') ?? [];
  const realmRoots = await trust.realmRoots(aaguid);
  const verdict = await evaluateAttestationTrust({
    aaguid,
    x5c,
    realmRoots,
    operatorEntry: trust.operator.get(aaguid) ?? null,
    now,
  });
  if (policy.requireTrustedAttestation) {
    if (!trust.operatorExists && !(await trust.realmHasAny()))
      return refuse('feature_disabled', 'no trusted authenticator metadata is configured');
    if (!verdict.trusted)
      return refuse(
        'attestation_not_trusted',
        `the attestation is not trusted${verdict.problem ? ` (certificate path: ${verdict.problem})` : ''}`,
      );
  }
  const transports = (credential as { response?: { transports?: unknown } }).response?.transports;
  return {
    ok: true,
    passkey: {
      credentialId: info.credential.id,
      publicKey: info.credential.publicKey,
      counter: info.credential.counter,
      transports: Array.isArray(transports)
        ? transports.filter((t) => typeof t === 'string').slice(0, 8)
        : [],
      aaguid,
      backupEligible: info.credentialDeviceType === 'multiDevice',
      backupState: info.credentialBackedUp,
      userVerified: info.userVerified,
      format: attestation.get('fmt'),
      attestationTrusted: verdict.trusted,
      attestationSource: verdict.trusted ? verdict.source : null,
      credentialProtection:
        applied === 3
          ? 'userVerificationRequired'
          : applied === 2
            ? 'userVerificationOptionalWithCredentialIDList'
            : applied === 1
              ? 'userVerificationOptional'
              : null,
    },
  };
}
