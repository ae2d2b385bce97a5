// Strict input of the users administration API (spec doc 1, "Recovery and account
// administration"; doc 2, Limits: page size and keyset cursors). Shape errors (unknown members,
// wrong JSON types) answer 400 invalid_request; values that break a rule answer 422.
import {
  array,
  boolean,
  dateTime,
  decodeBody,
  enumOf,
  nullable,
  object,
  optional,
  refine,
  string,
} from '../platform/http/decode.ts';
import {
  cursorBinding,
  openCursor,
  type PageSizes,
  pageLimit,
  queryParams,
} from '../platform/http/keyset.ts';
import { problem } from '../platform/http/problem.ts';
import { isValidIdentifier } from './identifiers.ts';
import { MIN_PASSWORD_LENGTH } from './password-rules.ts';

/** Required actions an administrator may set (spec doc 1, sign-in evaluation order step 6). */
export const ADMIN_REQUIRED_ACTIONS = [
  'update_password',
  'verify_email',
  'verify_contact',
  'configure_totp',
] as const;
export type AdminRequiredAction = (typeof ADMIN_REQUIRED_ACTIONS)[number];

const MAX_PASSWORD_BYTES = 1024;

const password = () => string({ minLength: MIN_PASSWORD_LENGTH, maxBytes: MAX_PASSWORD_BYTES });
const identifier = (type: 'email' | 'username' | 'phone') =>
  refine(
    string({ maxBytes: 254 }),
    (v) => (isValidIdentifier(type, v) ? null : `not a valid ${type}`),
    'invalid',
  );

const displayName = () => string({ minLength: 1, maxLength: 200 });

const createUserShape = object({
  email: optional(identifier('email')),
  username: optional(identifier('username')),
  phone: optional(identifier('phone')),
  display_name: optional(displayName()),
  password: optional(password()),
  email_verified: optional(boolean()),
  required_actions: optional(array(enumOf(ADMIN_REQUIRED_ACTIONS), { maxItems: 4, unique: true })),
});

// PATCH /users/{user}: the profile members an administrator may change; null clears one.
const updateProfileShape = object({ display_name: nullable(optional(displayName())) });

const setPasswordShape = object({ password: password(), temporary: optional(boolean()) });

const reasonShape = object({ reason: string({ minLength: 1, maxLength: 500 }) });
const optionalReasonShape = object({ reason: optional(string({ minLength: 1, maxLength: 500 })) });

export type CreateUserInput = ReturnType<typeof decodeCreateUser>;

export function decodeCreateUser(body: unknown) {
  const input = decodeBody(createUserShape, body);
  if (input.email === undefined && input.username === undefined && input.phone === undefined) {
    throw problem.validation(
      [{ field: 'email', code: 'required', detail: 'give at least one of email, username or phone' }],
      'an account needs at least one identifier',
    );
  }
  if (input.emailVerified === true && input.email === undefined) {
    throw problem.validation([{ field: 'email_verified', code: 'not_allowed', detail: 'no email given' }]);
  }
  return input;
}

export type ProfileChange = { displayName: string | null };

/** A PATCH body naming nothing to change is 422, so a misspelt client sees it. */
export function decodeUpdateProfile(body: unknown): ProfileChange {
  const input = decodeBody(updateProfileShape, body);
  if (input.displayName === undefined) {
    throw problem.validation([{ field: 'display_name', code: 'required', detail: 'nothing to change' }]);
  }
  return { displayName: input.displayName };
}

export const decodeSetPassword = (body: unknown) => decodeBody(setPasswordShape, body);

/** {reason}: suspend, lock and reactivate. */
export const decodeReason = (body: unknown) => decodeBody(reasonShape, body).reason;

/** An optional {reason}; an empty request body counts as {}. */
export const decodeOptionalReason = (body: unknown) =>
  decodeBody(optionalReasonShape, body ?? {}).reason ?? null;

// ---- identifier administration and scheduled deactivation -----------------------------------

const IDENTIFIER_TYPES = ['email', 'username', 'phone'] as const;
const adminReason = () => string({ minLength: 1, maxLength: 500 });

const addIdentifierShape = object({
  type: enumOf(IDENTIFIER_TYPES),
  value: string({ minLength: 1, maxBytes: 254 }),
  reason: adminReason(),
});

/** POST /users/{user}/identifiers: the value must be a valid identifier of its type (422 on value). */
export function decodeAddIdentifier(body: unknown) {
  const input = decodeBody(addIdentifierShape, body);
  if (!isValidIdentifier(input.type, input.value)) {
    throw problem.validation([{ field: 'value', code: 'invalid', detail: `not a valid ${input.type}` }]);
  }
  return input;
}

const IDENTIFIER_ID = /^idf_[0-9a-z]{26}$/;
const verificationOverrideShape = object({
  identifier_id: refine(
    string({ maxLength: 64 }),
    (v) => (IDENTIFIER_ID.test(v) ? null : 'an identifier id (idf_...)'),
    'pattern',
  ),
  reason: adminReason(),
});

export const decodeVerificationOverride = (body: unknown) => decodeBody(verificationOverrideShape, body);

/** Identifier ids that cannot exist are not found. */
export function identifierIdParam(raw: string): string {
  if (!IDENTIFIER_ID.test(raw)) throw problem.notFound('no such identifier');
  return raw;
}

const scheduledDeactivationShape = object({
  at: dateTime(),
  reason: adminReason(),
});

/** PUT /users/{user}/scheduled-deactivation: `at` must lie in the future (422 on at). */
export function decodeScheduledDeactivation(body: unknown, now: Date) {
  const input = decodeBody(scheduledDeactivationShape, body);
  if (input.at.getTime() <= now.getTime()) {
    throw problem.validation([{ field: 'at', code: 'in_past', detail: 'at must be in the future' }]);
  }
  return input;
}

// ---- path parameters ------------------------------------------------------------------------

const USER_ID = /^usr_[0-9a-z]{26}$/;
const SESSION_ID = /^ses_[0-9a-z]{26}$/;

/** Ids that cannot exist are simply not found; they never reach SQL. */
export function userIdParam(raw: string): string {
  if (!USER_ID.test(raw)) throw problem.notFound('no such user');
  return raw;
}

export function sessionIdParam(raw: string): string {
  if (!SESSION_ID.test(raw)) throw problem.notFound('no such session');
  return raw;
}

// ---- list query and keyset cursors -----------------------------------------------------------

export interface ListQuery {
  limit: number;
  /** The last id of the previous page. */
  after: string | null;
  identifier: string | null;
  /** Give it to pageBody for the next page. */
  binding: string;
}

/** limit, cursor and the identifier filter of GET /users. */
export function decodeListQuery(rawQuery: unknown, pages: PageSizes, binding: string): ListQuery {
  const param = queryParams(rawQuery, ['identifier']);
  const limit = pageLimit(param('limit'), pages);
  const identifier = param('identifier');
  if (identifier !== null && (identifier.length === 0 || Buffer.byteLength(identifier) > 254)) {
    throw problem.invalidRequest('identifier must be 1 to 254 bytes');
  }
  const bound = cursorBinding([binding, identifier]);
  const after = openCursor(param('cursor'), bound, (id) => USER_ID.test(id));
  return { limit, after, identifier, binding: bound };
}
