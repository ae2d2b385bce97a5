// Strict input of the organizations API (docs/api-organizations.md). Shape errors (unknown
// members, wrong JSON types) answer 400 invalid_request; values that break a rule answer 422
// validation_failed, as in the users API.
import {
  array,
  boolean,
  type Decoder,
  decodeBody,
  integer,
  map,
  object,
  optional,
  record,
  refine,
  string,
  unknownJson,
} from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { isValidIdentifier } from '../users/identifiers.ts';
import type { OrganizationPolicy } from './organizations.types.ts';

// ---- value rules ------------------------------------------------------------------------------

/** Slugs: lower-case letters, digits and hyphens, 1 to 64 characters. */
const SLUG = /^[a-z0-9-]{1,64}$/;

/** An IANA time zone the runtime knows, in its canonical spelling; null when unknown. */
export function canonicalTimeZone(value: string): string | null {
  // Offsets such as "+01:00" are accepted by newer ICU builds but are not zone names.
  if (!/^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(value)) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** A BCP 47 language tag in canonical case; null when malformed. */
export function canonicalLocale(value: string): string | null {
  try {
    const [tag] = Intl.getCanonicalLocales(value);
    return tag ?? null;
  } catch {
    return null;
  }
}

const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** A lower-case DNS name of two or more labels whose last label is not numeric. */
export function isDomainName(value: string): boolean {
  if (value.length > 253) return false;
  const labels = value.split('.');
  if (labels.length < 2 || !labels.every((l) => DNS_LABEL.test(l))) return false;
  return !/^[0-9]+$/.test(labels.at(-1) ?? '');
}

const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,9})?(?:Z|[+-]\d{2}:\d{2})$/i;

const timestamp = () =>
  map(
    refine(
      string({ maxLength: 40 }),
      (v) => (RFC3339.test(v) && !Number.isNaN(Date.parse(v)) ? null : 'an RFC 3339 timestamp'),
      'invalid',
    ),
    (v) => new Date(v),
  );

const displayName = () => string({ minLength: 1, maxLength: 200 });
/** Empty clears the value (JSON null means "absent" in every body, spec doc 1 decoding rule 5). */
const clearable = (d: Decoder<string>, rule: (v: string) => string | null, detail: string) =>
  map(
    refine(d, (v) => (v === '' || rule(v) !== null ? null : detail), 'invalid'),
    (v) => (v === '' ? null : rule(v)),
  );
const identity = (v: string) => v;
const locale = () => clearable(string({ maxLength: 35 }), canonicalLocale, 'a BCP 47 language tag');
const timeZone = () => clearable(string({ maxLength: 64 }), canonicalTimeZone, 'an IANA time zone name');
const externalIdCreate = () => string({ minLength: 1, maxLength: 255 });
const externalIdPatch = () => clearable(string({ maxLength: 255 }), identity, 'text');
/** Where a NUL character sits in a JSON value (jsonb cannot store one), or null when there is none. */
export function nulPath(v: unknown, path = ''): string | null {
  if (typeof v === 'string') return v.includes('\0') ? path : null;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const at = nulPath(v[i], `${path}[${i}]`);
      if (at !== null) return at;
    }
    return null;
  }
  if (typeof v === 'object' && v !== null) {
    for (const [k, x] of Object.entries(v)) {
      const here = path === '' ? k : `${path}.${k}`;
      if (k.includes('\0')) return here;
      const at = nulPath(x, here);
      if (at !== null) return at;
    }
  }
  return null;
}

/**
 * Free-form metadata (doc 2, Limits: metadata_bytes). A NUL in a key or value is a value rule
 * broken (422), refused before it reaches jsonb.
 */
export const metadataMap = (maxBytes: number) =>
  refine(
    record(unknownJson(), { maxBytes }),
    (v) => {
      const at = nulPath(v);
      return at === null ? null : `no NUL characters (at ${at.replaceAll('\0', '\\u0000')})`;
    },
    'pattern',
  );
const metadata = metadataMap;
const contact = () =>
  object({
    email: optional(
      refine(
        string({ maxBytes: 254 }),
        (v) => (isValidIdentifier('email', v) ? null : 'an email'),
        'invalid',
      ),
    ),
    name: optional(string({ minLength: 1, maxLength: 200 })),
    phone: optional(
      refine(string({ maxLength: 16 }), (v) => (isValidIdentifier('phone', v) ? null : 'E.164'), 'invalid'),
    ),
  });
/** doc 2, Data lifecycle 1: audit_retention_days is 0 or 30..3650. */
const retentionDays = () =>
  refine(integer(), (v) => (v === 0 || (v >= 30 && v <= 3650) ? null : '0, or 30 to 3650'), 'out_of_range');
/** The policy keeps its wire member names: it is stored and shown as given. */
const policy = () =>
  map(
    object({
      mfa_required: optional(boolean()),
      require_sso: optional(boolean()),
      audit_retention_days: optional(retentionDays()),
    }),
    (p): Partial<OrganizationPolicy> => ({
      ...(p.mfaRequired === undefined ? {} : { mfa_required: p.mfaRequired }),
      ...(p.requireSso === undefined ? {} : { require_sso: p.requireSso }),
      ...(p.auditRetentionDays === undefined ? {} : { audit_retention_days: p.auditRetentionDays }),
    }),
  );
const id = (prefix: string) =>
  refine(string({ maxLength: 64 }), (v) => (idPattern(prefix).test(v) ? null : `a ${prefix}_ id`), 'invalid');
const roleIds = () => array(id('rol'), { maxItems: 20, unique: true });
const reason = () => string({ minLength: 1, maxLength: 500 });

const idPattern = (prefix: string) => new RegExp(`^${prefix}_[0-9a-z]{26}$`);

// ---- bodies -----------------------------------------------------------------------------------

function shapes(metadataBytes: number) {
  return {
    create: object({
      slug: refine(
        string({ maxLength: 64 }),
        (v) => (SLUG.test(v) ? null : 'lower-case letters, digits and hyphens'),
        'pattern',
      ),
      display_name: displayName(),
      locale: optional(locale()),
      time_zone: optional(timeZone()),
      metadata: optional(metadata(metadataBytes)),
      contact: optional(contact()),
      external_id: optional(externalIdCreate()),
      policy: optional(policy()),
      owner_user_id: optional(id('usr')),
    }),
    patch: object({
      display_name: optional(displayName()),
      locale: optional(locale()),
      time_zone: optional(timeZone()),
      metadata: optional(metadata(metadataBytes)),
      contact: optional(contact()),
      external_id: optional(externalIdPatch()),
      policy: optional(policy()),
    }),
    addMember: object({
      user_id: id('usr'),
      role_ids: optional(roleIds()),
      expires_at: optional(timestamp()),
      metadata: optional(metadata(metadataBytes)),
      external_id: optional(externalIdCreate()),
    }),
  };
}

type Shapes = ReturnType<typeof shapes>;
const byLimit = new Map<number, Shapes>();
const shapesFor = (metadataBytes: number): Shapes => {
  const known = byLimit.get(metadataBytes);
  if (known) return known;
  const made = shapes(metadataBytes);
  byLimit.set(metadataBytes, made);
  return made;
};

export type CreateOrganizationInput = ReturnType<typeof decodeCreateOrganization>;
export type PatchOrganizationInput = ReturnType<typeof decodePatchOrganization>;
export type AddMemberInput = ReturnType<typeof decodeAddMember>;

export const decodeCreateOrganization = (body: unknown, metadataBytes: number) =>
  decodeBody(shapesFor(metadataBytes).create, body);

export function decodePatchOrganization(body: unknown, metadataBytes: number) {
  const input = decodeBody(shapesFor(metadataBytes).patch, body);
  if (Object.keys(input).length === 0) throw problem.invalidRequest('give at least one member to change');
  return input;
}

export const decodeAddMember = (body: unknown, metadataBytes: number) =>
  decodeBody(shapesFor(metadataBytes).addMember, body);

const domainShape = object({
  domain: refine(
    string({ maxLength: 253 }),
    (v) => (isDomainName(v) ? null : 'a lower-case DNS name'),
    'invalid',
  ),
});
export const decodeDomain = (body: unknown) => decodeBody(domainShape, body).domain;

const invitationShape = object({
  user_id: id('usr'),
  role_ids: optional(roleIds()),
  message: optional(string({ minLength: 1, maxLength: 1000 })),
});
export type InvitationInput = ReturnType<typeof decodeInvitation>;
export const decodeInvitation = (body: unknown) => decodeBody(invitationShape, body);

const reassignShape = object({ user_id: id('usr') });
export const decodeReassign = (body: unknown) => decodeBody(reassignShape, body).userId;

const joinRequestShape = object({ organization_id: id('org') });
export const decodeJoinRequest = (body: unknown) => decodeBody(joinRequestShape, body).organizationId;

const approveShape = object({ role_ids: optional(roleIds()) });
/** An optional {role_ids}; an empty request body counts as {}. */
export const decodeApprove = (body: unknown) => decodeBody(approveShape, body ?? {}).roleIds ?? [];

const transferShape = object({ user_id: id('usr'), reason: optional(reason()) });
export const decodeOwnershipTransfer = (body: unknown) => decodeBody(transferShape, body);

const optionalReasonShape = object({ reason: optional(reason()) });
/** An optional {reason}; an empty request body counts as {}. */
export const decodeOptionalReason = (body: unknown): string | null =>
  decodeBody(optionalReasonShape, body ?? {}).reason ?? null;

// ---- path parameters --------------------------------------------------------------------------

/** Ids that cannot exist are simply not found; they never reach SQL. */
function idParam(prefix: string, what: string) {
  const pattern = idPattern(prefix);
  return (raw: string): string => {
    if (!pattern.test(raw)) throw problem.notFound(`no such ${what}`);
    return raw;
  };
}

export const orgParam = idParam('org', 'organization');
export const membershipParam = idParam('mem', 'membership');
export const invitationParam = idParam('inv', 'invitation');
export const joinRequestParam = idParam('jrq', 'join request');

export function domainParam(raw: string): string {
  if (!isDomainName(raw)) throw problem.notFound('no such domain');
  return raw;
}
