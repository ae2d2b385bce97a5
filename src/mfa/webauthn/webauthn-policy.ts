// A realm's passkey policy as the ceremonies use it (spec doc 1, policy member `webauthn` and
// "Passkey policy (reference)"), with the defaults of a new realm and the rp_id and origins that
// follow from the public origin when the realm names none.
import type { RealmPolicy } from '../../realms/index.ts';
import { policyValue } from '../../realms/index.ts';
import { factorAllowed } from '../factor-rules.ts';

export type Attestation = 'none' | 'indirect' | 'direct' | 'enterprise';
export type UserVerification = 'required' | 'preferred' | 'discouraged';
export type CredProtectPolicy = 'userVerificationOptionalWithCredentialIDList' | 'userVerificationRequired';

export interface WebauthnPolicy {
  rpId: string;
  /** True when the realm set rp_id itself (related origins need it). */
  explicitRpId: boolean;
  /** Origins a ceremony may come from: origins plus related_origins, else the public origin. */
  origins: string[];
  relatedOrigins: string[];
  attestation: Attestation;
  requireTrustedAttestation: boolean;
  allowedAaguids: string[];
  blockedAaguids: string[];
  credentialProtection: CredProtectPolicy | null;
  enforceCredentialProtection: boolean;
  allowSynced: boolean;
  userVerification: UserVerification;
}

export const ZERO_AAGUID = '00000000-0000-0000-0000-000000000000';

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];

const trimSlash = (o: string) => (o.endsWith('/') ? o.slice(0, -1) : o);

export function webauthnPolicy(policy: RealmPolicy, publicOrigin: string): WebauthnPolicy {
  const v = (m: string) => policyValue(policy, 'webauthn', m);
  const rp = v('rp_id');
  const explicitRpId = typeof rp === 'string' && rp !== '';
  const own = strings(v('origins')).map(trimSlash);
  const related = strings(v('related_origins')).map(trimSlash);
  const att = v('attestation');
  const cp = v('credential_protection');
  const uv = v('user_verification');
  return {
    rpId: explicitRpId ? (rp as string) : new URL(publicOrigin).hostname,
    explicitRpId,
    origins: [...new Set([...(own.length > 0 ? own : [trimSlash(publicOrigin)]), ...related])],
    relatedOrigins: related,
    attestation: att === 'indirect' || att === 'direct' || att === 'enterprise' ? att : 'none',
    requireTrustedAttestation: v('require_trusted_attestation') === true,
    allowedAaguids: strings(v('allowed_aaguids')),
    blockedAaguids: strings(v('blocked_aaguids')),
    credentialProtection:
      cp === 'userVerificationOptionalWithCredentialIDList' || cp === 'userVerificationRequired' ? cp : null,
    enforceCredentialProtection: v('enforce_credential_protection') === true,
    allowSynced: v('allow_synced') !== false,
    userVerification: uv === 'required' || uv === 'discouraged' ? uv : 'preferred',
  };
}

/**
 * The allow and block lists (Passkey policy 2): a listed model passes an allow list, a blocked one
 * fails; the zero AAGUID passes an allow list only when listed itself.
 */
export function aaguidAllowed(p: Pick<WebauthnPolicy, 'allowedAaguids' | 'blockedAaguids'>, aaguid: string) {
  const id = aaguid.toLowerCase();
  if (p.allowedAaguids.length > 0 && !p.allowedAaguids.includes(id)) return false;
  return !p.blockedAaguids.includes(id);
}

/** credProtect levels as the CTAP extension output numbers them. */
export const CRED_PROTECT_LEVEL: Record<CredProtectPolicy, number> = {
  userVerificationOptionalWithCredentialIDList: 2,
  userVerificationRequired: 3,
};

/** Passkeys are on as a second factor unless mfa.allowed_factors leaves webauthn out. */
export const webauthnFactorAllowed = (policy: RealmPolicy): boolean => factorAllowed(policy, 'webauthn');

/** login.passkeys: passkeys as a primary (passwordless) method. */
export const passkeyLoginOn = (policy: RealmPolicy): boolean =>
  policyValue(policy, 'login', 'passkeys') === true;
