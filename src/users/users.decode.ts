// Strict input of the users administration API (spec doc 1, "Recovery and account
// administration"; doc 2, Limits: page size and keyset cursors). Shape errors (unknown members,
// wrong JSON types) answer 400 invalid_request; values that break a rule answer 422.
import { createHash } from 'node:crypto';
import {
  array,
  boolean,
  type Decoder,
  enumOf,
  object,
  optional,
  refine,
  string,
  tryDecode,
} from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { MIN_PASSWORD_LENGTH } from '../signin/steps/update-password.ts';
import { isValidIdentifier } from './identifiers.ts';

/** Required actions an administrator may set (spec doc 1, sign-in evaluation order step 6). */
export const ADMIN_REQUIRED_ACTIONS = ['update_password', 'verify_email', 'configure_totp'] as const;
export type AdminRequiredAction = (typeof ADMIN_REQUIRED_ACTIONS)[number];

const MAX_PASSWORD_BYTES = 1024;

const password = () => string({ minLength: MIN_PASSWORD_LENGTH, maxBytes: MAX_PASSWORD_BYTES });
const identifier = (type: 'email' | 'username' | 'phone') =>
  refine(
    string({ maxBytes: 254 }),
    (v) => (isValidIdentifier(type, v) ? null : `not a valid ${type}`),
    'invalid',
  );

const createUserShape = object({
  email: optional(identifier('email')),
  username: optional(identifier('username')),
  phone: optional(identifier('phone')),
  display_name: optional(string({ minLength: 1, maxLength: 200 })),
  password: optional(password()),
  email_verified: optional(boolean()),
  required_actions: optional(array(enumOf(ADMIN_REQUIRED_ACTIONS), { maxItems: 3, unique: true })),
});

const setPasswordShape = object({ password: password(), temporary: optional(boolean()) });

const reasonShape = object({ reason: string({ minLength: 1, maxLength: 500 }) });
const optionalReasonShape = object({ reason: optional(string({ minLength: 1, maxLength: 500 })) });

/** Errors about the body's shape are a bad request; every other one is a validation failure. */
const SHAPE_CODES = new Set(['unknown_member', 'duplicate', 'type']);

function decodeOrValidate<T>(decoder: Decoder<T>, body: unknown): T {
  const r = tryDecode(decoder, body);
  if (r.ok) return r.value;
  if (r.errors.some((e) => SHAPE_CODES.has(e.code)))
    throw problem.invalidRequest('request body has invalid members', r.errors);
  throw problem.validation(r.errors);
}

export type CreateUserInput = ReturnType<typeof decodeCreateUser>;

export function decodeCreateUser(body: unknown) {
  const input = decodeOrValidate(createUserShape, body);
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

export const decodeSetPassword = (body: unknown) => decodeOrValidate(setPasswordShape, body);

/** {reason}: suspend, lock and reactivate. */
export const decodeReason = (body: unknown) => decodeOrValidate(reasonShape, body).reason;

/** An optional {reason}; an empty request body counts as {}. */
export const decodeOptionalReason = (body: unknown) =>
  decodeOrValidate(optionalReasonShape, body ?? {}).reason ?? null;

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
  /** Give it to makeCursor for the next page. */
  binding: string;
}

const LIST_PARAMS = new Set(['limit', 'cursor', 'identifier']);
const MAX_CURSOR_CHARS = 512;

function single(query: Record<string, unknown>, name: string): string | null {
  const v = query[name];
  if (v === undefined) return null;
  if (typeof v !== 'string') throw problem.invalidRequest(`give ${name} once`);
  return v;
}

/**
 * limit, cursor and the identifier filter of GET /users. Unknown parameters are refused, so a
 * misspelt filter never silently lists every account.
 */
export function decodeListQuery(
  rawQuery: unknown,
  pages: { defaultPageSize: number; maxPageSize: number },
  binding: string,
): ListQuery {
  const query = (rawQuery ?? {}) as Record<string, unknown>;
  for (const name of Object.keys(query)) {
    if (!LIST_PARAMS.has(name)) throw problem.invalidRequest(`unknown query parameter ${name.slice(0, 64)}`);
  }
  const limitText = single(query, 'limit');
  let limit = pages.defaultPageSize;
  if (limitText !== null) {
    if (!/^[0-9]{1,12}$/.test(limitText) || Number(limitText) < 1)
      throw problem.invalidRequest('limit must be a positive integer');
    // doc 2 Limits: larger values are reduced, not refused.
    limit = Math.min(Number(limitText), pages.maxPageSize);
  }
  const identifier = single(query, 'identifier');
  if (identifier !== null && (identifier.length === 0 || Buffer.byteLength(identifier) > 254)) {
    throw problem.invalidRequest('identifier must be 1 to 254 bytes');
  }
  const bound = cursorBinding(binding, identifier);
  const cursor = single(query, 'cursor');
  const after = cursor === null ? null : openCursor(cursor, bound);
  return { limit, after, identifier, binding: bound };
}

/** What a cursor is bound to: the realm, the route and the filters (doc 2, Limits). */
function cursorBinding(binding: string, identifier: string | null): string {
  return createHash('sha256')
    .update(JSON.stringify([binding, identifier]))
    .digest('base64url')
    .slice(0, 22);
}

export function makeCursor(lastId: string, binding: string): string {
  return Buffer.from(JSON.stringify({ a: lastId, b: binding })).toString('base64url');
}

function openCursor(cursor: string, binding: string): string {
  const invalid = () => problem.invalidRequest('invalid cursor');
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_CHARS || !/^[A-Za-z0-9_-]+$/.test(cursor))
    throw invalid();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  const c = parsed as { a?: unknown; b?: unknown } | null;
  if (!c || typeof c !== 'object' || c.b !== binding || typeof c.a !== 'string' || !USER_ID.test(c.a))
    throw invalid();
  return c.a;
}
