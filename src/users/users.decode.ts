// Strict input of the users administration API (spec doc 1, "Recovery and account
// administration"; doc 2, Limits: page size and keyset cursors). Shape errors (unknown members,
// wrong JSON types) answer 400 invalid_request; values that break a rule answer 422.
import { dateTime, decodeBody, enumOf, object, refine, string } from '../platform/http/decode.ts';
import {
  cursorBinding,
  openCursor,
  type PageSizes,
  pageLimit,
  queryParams,
} from '../platform/http/keyset.ts';
import { problem } from '../platform/http/problem.ts';
import { isValidIdentifier } from './identifiers.ts';

/** Required actions an administrator may set (spec doc 1, sign-in evaluation order step 6). */
export const ADMIN_REQUIRED_ACTIONS = [
  'update_password',
  'verify_email',
  'verify_contact',
  'configure_totp',
] as const;
export type AdminRequiredAction = (typeof ADMIN_REQUIRED_ACTIONS)[number];

const reasonShape = object({ reason: string({ minLength: 1, maxLength: 500 }) });

/** {reason}: suspend, lock and reactivate. */
export const decodeReason = (body: unknown) => decodeBody(reasonShape, body).reason;

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

export const USER_ID = /^usr_[0-9a-z]{26}$/;
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
