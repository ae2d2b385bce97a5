// Who the upstream says signed in (docs/federation.md, Claims): the connection's claim mapping
// applied to the validated ID token claims and the profile the upstream answered, the email
// address trusted only when the upstream marks it verified (or the connection says to trust it),
// and whether the upstream did multi-factor authentication (amr or acr, as the connection names
// them). Pure: the tests drive it with tables.
import type { ClaimMapping, ConnectionConfig } from '../identity-providers/index.ts';

export interface UpstreamIdentity {
  /** The issuer the upstream signed with (a multi-tenant connection's tenant filled in). */
  issuer: string;
  subject: string;
  email: string | null;
  emailVerified: boolean;
  name: string | null;
  givenName: string | null;
  familyName: string | null;
  preferredUsername: string | null;
  /** The upstream says it did multi-factor authentication. */
  mfa: boolean;
}

const MAX_SUBJECT = 255;
const MAX_TEXT = 200;

const text = (v: unknown, max = MAX_TEXT): string | null => {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return String(v);
  if (typeof v !== 'string') return null;
  const t = v.trim();
  return t.length > 0 && t.length <= max && !/\p{Cc}/u.test(t) ? t : null;
};

/** Apple sends email_verified as the string "true". */
const truthy = (v: unknown): boolean => v === true || v === 'true';

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export function identityOf(
  issuer: string,
  claims: Record<string, unknown>,
  mapping: ClaimMapping,
  config: ConnectionConfig,
): UpstreamIdentity | null {
  const read = (name: string | undefined, max?: number) => (name ? text(claims[name], max) : null);
  const subject = read(mapping.subject ?? 'sub', MAX_SUBJECT);
  if (!subject) return null;
  const email = read(mapping.email, 254);
  const validEmail = email && EMAIL.test(email) ? email : null;
  const amr = Array.isArray(claims.amr) ? claims.amr.filter((x): x is string => typeof x === 'string') : [];
  const acr = typeof claims.acr === 'string' ? claims.acr : null;
  return {
    issuer,
    subject,
    email: validEmail,
    emailVerified:
      validEmail !== null &&
      (config.trust_email === true ||
        (mapping.email_verified ? truthy(claims[mapping.email_verified]) : false)),
    name: read(mapping.name),
    givenName: read(mapping.given_name),
    familyName: read(mapping.family_name),
    preferredUsername: read(mapping.preferred_username),
    mfa:
      amr.some((v) => (config.mfa_amr_values ?? []).includes(v)) ||
      (acr !== null && (config.mfa_acr_values ?? []).includes(acr)),
  };
}
