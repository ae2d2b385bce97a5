// What a client may ask of one resource (spec doc 1, Value formats: GrantSpec; Resources, grants
// and decisions: the resource-grants endpoint). Pure: decoders for both the API body and the
// configuration document's GrantSpec, and the rules that need the resource's declared scopes and
// the realm's audiences, handed in by the caller.
import { isScopeName } from '../kernel/scope.ts';
import {
  array,
  type DecodeResult,
  type Decoder,
  object,
  optional,
  refine,
  string,
  tryDecode,
} from '../platform/http/decode.ts';
import type { FieldError } from '../platform/http/problem.ts';
import type { ExchangePolicy } from './resource.ts';

export const MAX_SCOPES_PER_RESOURCE = 200;
export const MAX_AUDIENCE_BYTES = 2048;
const MAX_SUBJECT_TYPES = 16;
const MAX_EXCHANGE_AUDIENCES = 50;

export const scopeName = (): Decoder<string> =>
  refine(
    string(),
    (s) => (isScopeName(s) ? null : '1 to 128 printable ASCII characters without space, " or \\'),
    'pattern',
  );

export const scopeList = (): Decoder<string[]> =>
  array(scopeName(), { maxItems: MAX_SCOPES_PER_RESOURCE, unique: true });

export const subjectTypeList = (): Decoder<string[]> =>
  array(string({ minLength: 1, maxLength: 64, printableAscii: true }), {
    maxItems: MAX_SUBJECT_TYPES,
    unique: true,
  });

export const exchangePolicyDecoder = (): Decoder<ExchangePolicy> =>
  object({
    accept_from_audiences: optional(
      array(string({ minLength: 1, maxBytes: MAX_AUDIENCE_BYTES }), {
        maxItems: MAX_EXCHANGE_AUDIENCES,
        unique: true,
      }),
      [],
    ),
    max_scopes: optional(scopeList(), []),
  });

/** A grant as given: absent subjectTypes or exchangePolicy are for the caller to default or keep. */
export interface GrantSpec {
  scopes: string[];
  subjectTypes?: string[];
  exchangePolicy?: ExchangePolicy;
}

const grantSpecObject = object({
  scopes: optional(scopeList(), []),
  subject_types: optional(subjectTypeList()),
  exchange_policy: optional(exchangePolicyDecoder()),
});
const grantSpecArray = scopeList();

/** The configuration document's GrantSpec: an array of scope names, or the object form. */
export function parseGrantSpec(value: unknown): DecodeResult<GrantSpec> {
  if (Array.isArray(value)) {
    const r = tryDecode(grantSpecArray, value);
    return r.ok ? { ok: true, value: { scopes: r.value } } : r;
  }
  return tryDecode(grantSpecObject, value);
}

export interface GrantContext {
  /** Scope names the resource declares. */
  declaredScopes: ReadonlySet<string>;
  /** Audiences of the realm: built-in ones and registered resources. */
  realmAudiences: ReadonlySet<string>;
}

/**
 * Rules that need the resource and the realm: every granted scope and every exchange max scope is
 * declared by the resource, and every accepted audience belongs to the realm. `scopesField` names
 * the scope list in field paths (`allowed_scopes` in the API, `scopes` in a document).
 */
export function grantProblems(
  g: Pick<GrantSpec, 'scopes' | 'exchangePolicy'>,
  c: GrantContext,
  scopesField = 'scopes',
): FieldError[] {
  const out: FieldError[] = [];
  const undeclared = (list: readonly string[], field: string) => {
    list.forEach((s, i) => {
      if (!c.declaredScopes.has(s))
        out.push({
          field: `${field}[${i}]`,
          code: 'undeclared_scope',
          detail: 'the resource does not declare it',
        });
    });
  };
  undeclared(g.scopes, scopesField);
  if (g.exchangePolicy) {
    undeclared(g.exchangePolicy.maxScopes, 'exchange_policy.max_scopes');
    g.exchangePolicy.acceptFromAudiences.forEach((a, i) => {
      if (!c.realmAudiences.has(a))
        out.push({
          field: `exchange_policy.accept_from_audiences[${i}]`,
          code: 'unknown_audience',
          detail: 'not an audience of this realm',
        });
    });
  }
  return out;
}

/** Service clients get client-credentials tokens; every other kind acts for users. */
export const defaultSubjectTypes = (clientType: string): string[] =>
  clientType === 'service' ? ['service_principal'] : ['user'];

const sameSet = (a: readonly string[], b: readonly string[]): boolean => {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
};

const samePolicy = (a: ExchangePolicy | null, b: ExchangePolicy | null): boolean =>
  a === null || b === null
    ? a === b
    : sameSet(a.acceptFromAudiences, b.acceptFromAudiences) && sameSet(a.maxScopes, b.maxScopes);

export interface StoredGrant {
  allowedScopes: string[];
  subjectTypes: string[];
  exchangePolicy: ExchangePolicy | null;
}

/**
 * Whether a document's GrantSpec asks for nothing new (spec doc 1, Import semantics 5): lists
 * compare as sets, and subject_types and exchange_policy only when the spec gives them.
 */
export function grantUnchanged(spec: GrantSpec, stored: StoredGrant): boolean {
  return (
    sameSet(spec.scopes, stored.allowedScopes) &&
    (spec.subjectTypes === undefined || sameSet(spec.subjectTypes, stored.subjectTypes)) &&
    (spec.exchangePolicy === undefined || samePolicy(spec.exchangePolicy, stored.exchangePolicy))
  );
}
