// The realm policy members that govern self-service registration, guests and the profile and
// terms required actions (spec doc 1, Policy; decisions in docs/registration.md):
//   registration.mode                closed (default) | open | domain_restricted
//   registration.allowed_domains     email domains domain_restricted accepts
//   registration.require_approval    hold every registration until an administrator decides
//   registration.require_email_verification  default true
//   registration.allow_guests        boolean
//   login.identifiers                the identifier types a user signs in and registers with
//   interaction.terms_version        when set, every account accepts this version (accept_terms)
//   profile.attributes               [{name, user_editable (default true)}]; the standard claims
//                                    count as user-editable attributes unless declared otherwise
//   profile.required_fields          attribute names complete_profile asks for
// The realm policy schema (realms/policy-schema.ts) checks their shapes when they are written.
import { Problem } from '../platform/http/problem.ts';
import { policyValue, type RealmPolicy, STANDARD_PROFILE_ATTRIBUTES } from '../realms/index.ts';
import { type IdentifierType, identifierTypeOf } from '../users/index.ts';

export type RegistrationMode = 'closed' | 'open' | 'domain_restricted';

const MODES: readonly RegistrationMode[] = ['closed', 'open', 'domain_restricted'];

export function registrationMode(p: RealmPolicy): RegistrationMode {
  const v = policyValue(p, 'registration', 'mode');
  return MODES.includes(v as RegistrationMode) ? (v as RegistrationMode) : 'closed';
}

const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x) => typeof x === 'string') : []);

/** login.identifiers of a new realm. */
const DEFAULT_IDENTIFIERS: readonly IdentifierType[] = ['email', 'username'];

/** login.identifiers: the identifier types a user may sign in and register with. */
export function signInIdentifiers(p: RealmPolicy): readonly IdentifierType[] {
  const v = policyValue(p, 'login', 'identifiers');
  return Array.isArray(v) && v.length > 0 ? (v as IdentifierType[]) : DEFAULT_IDENTIFIERS;
}

/**
 * A typed identifier of a type the realm does not accept answers 422 `not_allowed` on its field:
 * it says something about the realm, never whether an account exists (docs/decisions.md).
 */
export function refuseIdentifierType(p: RealmPolicy, field: string, identifier: string): void {
  const type = identifierTypeOf(identifier);
  if (signInIdentifiers(p).includes(type)) return;
  throw new Problem(422, 'validation_failed', `this realm does not accept a ${type} to sign in`, {
    errors: [{ field, code: 'not_allowed', detail: `accepted: ${signInIdentifiers(p).join(', ')}` }],
  });
}

export const allowedDomains = (p: RealmPolicy): string[] =>
  strings(policyValue(p, 'registration', 'allowed_domains')).map((d) => d.toLowerCase());

export const requireEmailVerification = (p: RealmPolicy): boolean =>
  policyValue(p, 'registration', 'require_email_verification') !== false;

export const requireApproval = (p: RealmPolicy): boolean =>
  policyValue(p, 'registration', 'require_approval') === true;

export const allowGuests = (p: RealmPolicy): boolean =>
  policyValue(p, 'registration', 'allow_guests') === true;

export function termsVersion(p: RealmPolicy): string | null {
  const v = policyValue(p, 'interaction', 'terms_version');
  return typeof v === 'string' && v !== '' ? v : null;
}

export interface ProfileAttribute {
  name: string;
  userEditable: boolean;
}

export function profileAttributes(p: RealmPolicy): ProfileAttribute[] {
  const v = policyValue(p, 'profile', 'attributes');
  const declared = (Array.isArray(v) ? v : []).flatMap((a) =>
    a && typeof a === 'object' && typeof (a as { name?: unknown }).name === 'string'
      ? [
          {
            name: (a as { name: string }).name,
            userEditable: (a as { user_editable?: unknown }).user_editable !== false,
          },
        ]
      : [],
  );
  const names = new Set(declared.map((a) => a.name));
  const standard = STANDARD_PROFILE_ATTRIBUTES.filter((n) => !names.has(n)).map((name) => ({
    name,
    userEditable: true,
  }));
  return [...declared, ...standard];
}

/** Required fields that name a user-editable attribute (others cannot be asked of the user). */
export function requiredProfileFields(p: RealmPolicy): string[] {
  const editable = new Set(
    profileAttributes(p)
      .filter((a) => a.userEditable)
      .map((a) => a.name),
  );
  return strings(policyValue(p, 'profile', 'required_fields')).filter((f) => editable.has(f));
}
