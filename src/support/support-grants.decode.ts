// Strict input of the support-access API (docs/support-access.md): shape errors are 400, values
// that break a rule 422 (decision D10).
import { isScopeName } from '../kernel/scope.ts';
import {
  array,
  boolean,
  decodeBody,
  integer,
  object,
  optional,
  refine,
  string,
} from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { MAX_GRANT_TTL_SECONDS } from '../support-grants/support-grant.ts';

const CONTROL = /\p{Cc}/u;
const text = (min: number, max: number) =>
  refine(
    string({ minLength: min, maxLength: max }),
    (v) => (CONTROL.test(v) ? 'no control characters' : null),
    'pattern',
  );
const id = () => string({ minLength: 1, maxLength: 128, pattern: /[!-~]+/ });
const scope = refine(
  string({ minLength: 1, maxLength: 128 }),
  (v) => (isScopeName(v) ? null : 'not a scope name'),
  'pattern',
);

const createShape = object({
  user_id: id(),
  client_id: id(),
  resource: string({ minLength: 1, maxLength: 2048 }),
  // Required by every grant, but checked with the rules, so that its absence is a 422 naming it.
  organization_id: optional(id()),
  scopes: array(scope, { minItems: 1, maxItems: 50, unique: true }),
  write: optional(boolean(), false),
  reason: text(1, 500),
  ttl_seconds: optional(integer({ min: 1, max: MAX_GRANT_TTL_SECONDS }), MAX_GRANT_TTL_SECONDS),
});

export const decodeCreateGrant = (body: unknown) => decodeBody(createShape, body);
export type CreateGrantInput = ReturnType<typeof decodeCreateGrant>;

const revokeShape = object({ reason: optional(text(1, 500)) });
export const decodeRevoke = (body: unknown) => decodeBody(revokeShape, body ?? {});

const preferenceShape = object({ allowed: boolean() });
export const decodePreference = (body: unknown) => decodeBody(preferenceShape, body);

/** A grant id in a path; anything else is as unknown as a grant that does not exist. */
export function grantIdParam(raw: string): string {
  if (!/^sgr_[0-9a-z]{26}$/.test(raw)) throw problem.notFound('no such support grant');
  return raw;
}
