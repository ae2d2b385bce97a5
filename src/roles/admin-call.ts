// What every change of the roles, groups, projects and service-principal APIs carries (realm,
// actor, correlation id, clock reading, and the caller), the input rules they share, and the
// problems they add. Their audit records go through the evidence recorder (audit/evidence.ts).
import type { Call } from '../kernel/call.ts';
import { refine, string } from '../platform/http/decode.ts';
import { type FieldError, Problem, problem } from '../platform/http/problem.ts';
import type { Delegator } from './delegator.ts';

/** A request's call with the caller whose holdings cap what it may delegate. */
export interface AdminChange extends Call {
  caller: Delegator;
  correlationId: string;
}

export const adminChange = (call: Call & { correlationId: string }, caller: Delegator): AdminChange => ({
  ...call,
  caller,
});

const CONTROL = /\p{Cc}/u;

/** Free text of min..max characters without control characters. */
export const plainText = (max: number, min = 0) =>
  refine(
    string({ minLength: min, maxLength: max }),
    (v) => (CONTROL.test(v) ? 'no control characters' : null),
    'pattern',
  );

/** An identifier: 1..128 printable ASCII characters without spaces. */
export const idText = () => string({ minLength: 1, maxLength: 128, pattern: /[!-~]+/ });

/** One 422 naming the field and a stable code. */
export const invalid = (field: string, code: string, detail: string): Problem =>
  problem.validation([{ field, code, detail }], detail);

export const invalidAll = (errors: FieldError[]): Problem => problem.validation(errors);

// Codes of their own, so a client can tell these refusals apart without reading the detail.
export const roleProblem = {
  builtinImmutable: () =>
    new Problem(409, 'builtin_role_immutable', 'built-in roles cannot be changed or deleted'),
  incompatible: (detail: string) => new Problem(409, 'incompatible_roles', detail),
};

// ---- ETags (the row's version) ---------------------------------------------------------------

export const etagOf = (version: number): string => `"${version}"`;

/** If-Match with strong comparison (RFC 9110 section 13.1.1); absent means "any version". */
export function ifMatchSatisfied(header: string | string[] | undefined, version: number): boolean {
  if (header === undefined) return true;
  const value = (Array.isArray(header) ? header.join(',') : header).trim();
  if (value === '*') return true;
  return value
    .split(',')
    .map((t) => t.trim())
    .includes(etagOf(version));
}

export const iso = (d: Date | string | null | undefined): string | null =>
  d === null || d === undefined ? null : new Date(d).toISOString();
