// The standard claims each OpenID scope releases (OpenID Connect Core 1.0 section 5.4; decision
// D21): `profile` the profile claims the account has, `email` and `phone` its primary address and
// number with their verification. UserInfo answers these; ID tokens carry them too unless the
// client chose `id_token_claims: minimal`. A claim without a value is left out.
import { STANDARD_PROFILE_ATTRIBUTES } from '../../realms/index.ts';
import type { ProfileClaimsRecord } from '../../users/index.ts';

// OIDC Core 5.1's profile claims that come from the account's profile attributes when set; name
// and preferred_username come from the display name and the username identifier instead.
const PROFILE_ATTRIBUTES = STANDARD_PROFILE_ATTRIBUTES.filter(
  (c) => c !== 'name' && c !== 'preferred_username',
);

/** Every claim a scope can release, for discovery's claims_supported. */
export const SCOPE_CLAIMS = [
  'name',
  ...PROFILE_ATTRIBUTES,
  'preferred_username',
  'updated_at',
  'email',
  'email_verified',
  'phone_number',
  'phone_number_verified',
] as const;

/** The scopes that release claims about the user. */
export const CLAIM_SCOPES: readonly string[] = ['profile', 'email', 'phone'];

const parsed = <T>(v: T | string | null): T | null => (typeof v === 'string' ? (JSON.parse(v) as T) : v);

/** The claims `scopes` release from the account's record (sub is the caller's). */
export function scopeClaims(scopes: readonly string[], user: ProfileClaimsRecord): Record<string, unknown> {
  const identifiers = parsed(user.identifiers) ?? [];
  const first = (type: 'email' | 'username' | 'phone') => identifiers.find((i) => i.type === type);
  const claims: Record<string, unknown> = {};
  if (scopes.includes('profile')) {
    if (user.display_name) claims.name = user.display_name;
    const attributes = parsed(user.attributes) ?? {};
    for (const name of PROFILE_ATTRIBUTES) {
      const value = attributes[name];
      if (typeof value === 'string' && value !== '') claims[name] = value;
    }
    const username = first('username');
    if (username) claims.preferred_username = username.value;
    claims.updated_at = Number(user.updated_at);
  }
  const email = scopes.includes('email') ? first('email') : undefined;
  if (email) Object.assign(claims, { email: email.value, email_verified: email.verified });
  const phone = scopes.includes('phone') ? first('phone') : undefined;
  if (phone) Object.assign(claims, { phone_number: phone.value, phone_number_verified: phone.verified });
  return claims;
}
