// The user import document, format service.user-import.v1 (spec doc 2, Migration adapters and
// Limits: 1..1000 users per job, metadata 16 KiB; docs/migration.md describes every member). This
// file holds its shape; user-import.validate.ts checks the rules across members.
import {
  array,
  boolean,
  enumOf,
  integer,
  literal,
  object,
  optional,
  record,
  string,
  unknownJson,
} from '../platform/http/decode.ts';
import { ADMIN_REQUIRED_ACTIONS } from '../users/users.decode.ts';

export const USER_IMPORT_FORMAT = 'service.user-import.v1';
/** spec doc 2, Limits: User import job. */
export const MAX_IMPORT_USERS = 1000;
/** Imported audit records a single account may bring. */
export const MAX_AUDIT_EVENTS_PER_USER = 1000;
/** Shortest --verification-reason (spec doc 2, Migration adapters options). */
export const MIN_VERIFICATION_REASON = 10;

/** Qualifies source ids and organization external ids for the whole migration. */
export const SOURCE_SYSTEM = /[a-z0-9][a-z0-9._-]{0,63}/;

export const PASSWORD_FORMATS = ['bcrypt', 'phc', 'keycloak', 'firebase_scrypt'] as const;

const identifier = object({
  type: enumOf(['email', 'phone', 'username'] as const),
  value: string({ minLength: 1, maxBytes: 254 }),
  verified: optional(boolean()),
  primary: optional(boolean()),
});

const password = object({
  format: enumOf(PASSWORD_FORMATS),
  hash: optional(string({ minLength: 1, maxBytes: 1024 })),
  salt: optional(string({ minLength: 1, maxBytes: 256 })),
  credential_data: optional(unknownJson({ maxBytes: 4096 })),
  secret_data: optional(unknownJson({ maxBytes: 4096 })),
});

const totp = object({
  secret: string({ minLength: 1, maxBytes: 256 }),
  encoding: enumOf(['base32', 'raw'] as const),
  digits: optional(integer({ min: 6, max: 8 })),
  period: optional(integer({ min: 10, max: 120 })),
  algorithm: optional(enumOf(['SHA1', 'SHA256', 'SHA512'] as const)),
});

/** A way in through an upstream connection of the realm (docs/migration.md, Linked identities). */
const linkedIdentity = object({
  connection_alias: string({ minLength: 1, maxLength: 64 }),
  upstream_subject: string({ minLength: 1, maxBytes: 255 }),
  upstream_email: optional(string({ minLength: 1, maxBytes: 254 })),
});

/** Links one imported account may bring. */
export const MAX_LINKED_IDENTITIES_PER_USER = 20;

const auditEvent = object({
  event_type: string({ minLength: 1, maxLength: 100, printableAscii: true }),
  occurred_at: string({ minLength: 1, maxLength: 40 }),
  outcome: enumOf(['success', 'failure'] as const),
  data: optional(record(unknownJson(), { maxBytes: 4096 })),
});

function shape(metadataBytes: number) {
  const membership = object({
    organization_id: optional(string({ minLength: 1, maxBytes: 64 })),
    organization_slug: optional(string({ minLength: 1, maxBytes: 64 })),
    organization_external_id: optional(string({ minLength: 1, maxBytes: 255 })),
    roles: optional(array(string({ minLength: 1, maxLength: 100 }), { maxItems: 20, unique: true })),
    external_id: optional(string({ minLength: 1, maxBytes: 255 })),
    metadata: optional(record(unknownJson(), { maxBytes: metadataBytes })),
  });
  const user = object({
    source_id: string({ minLength: 1, maxBytes: 255 }),
    identifiers: array(identifier, { minItems: 1, maxItems: 3 }),
    display_name: optional(string({ minLength: 1, maxLength: 200 })),
    given_name: optional(string({ minLength: 1, maxLength: 100 })),
    family_name: optional(string({ minLength: 1, maxLength: 100 })),
    locale: optional(string({ minLength: 2, maxLength: 35, pattern: /[A-Za-z0-9-]+/ })),
    zoneinfo: optional(string({ minLength: 1, maxLength: 64, printableAscii: true })),
    state: optional(enumOf(['active', 'suspended'] as const)),
    required_actions: optional(array(enumOf(ADMIN_REQUIRED_ACTIONS), { maxItems: 4, unique: true })),
    password: optional(password),
    totp: optional(totp),
    memberships: optional(array(membership, { maxItems: 50 })),
    admin_metadata: optional(record(unknownJson(), { maxBytes: metadataBytes })),
    audit_events: optional(array(auditEvent, { maxItems: MAX_AUDIT_EVENTS_PER_USER })),
    linked_identities: optional(array(linkedIdentity, { maxItems: MAX_LINKED_IDENTITIES_PER_USER })),
  });
  return object({
    format: literal(USER_IMPORT_FORMAT),
    source_system: string({ pattern: SOURCE_SYSTEM }),
    trust_email_verification: optional(boolean()),
    verification_reason: optional(string({ minLength: MIN_VERIFICATION_REASON, maxLength: 500 })),
    import_totp: optional(boolean()),
    allow_owner_roles: optional(boolean()),
    password_hash_parameters: optional(
      object({
        firebase_scrypt: optional(
          object({
            signer_key: string({ minLength: 1, maxBytes: 256 }),
            salt_separator: string({ maxBytes: 64 }),
            rounds: integer({ min: 1, max: 32 }),
            memory_cost: integer({ min: 1, max: 20 }),
          }),
        ),
      }),
    ),
    users: array(user, { minItems: 1, maxItems: MAX_IMPORT_USERS }),
  });
}

const shapes = new Map<number, ReturnType<typeof shape>>();

/** The decoder of the document under limits.metadata_bytes. */
export function importDocumentShape(metadataBytes: number) {
  let s = shapes.get(metadataBytes);
  if (!s) {
    s = shape(metadataBytes);
    shapes.set(metadataBytes, s);
  }
  return s;
}

export type ImportDocument = ReturnType<ReturnType<typeof shape>>;
export type ImportUser = ImportDocument['users'][number];
export type ImportMembership = NonNullable<ImportUser['memberships']>[number];
export type ImportPassword = NonNullable<ImportUser['password']>;
export type ImportTotp = NonNullable<ImportUser['totp']>;
