// One schema per route (docs/openapi.md): a route declares its path parameters, query, body and
// every response as TypeBox schemas. The same schemas give the handler its types, go into
// Fastify's route options (where @fastify/swagger reads them for the OpenAPI document, and the
// test harness checks every response against them) and, compiled once when the route is
// registered, decode the request body through decode.ts. Compiling into decode.ts keeps what JSON
// Schema validators cannot say: members matched ignoring ASCII case, null counting as absent,
// sizes in UTF-8 bytes, and the one error split of the service (400 for a wrong shape, 422 naming
// each member for a wrong value; spec doc 1, Errors), so a body answers the same problem whether
// its route is declared this way or still decodes by hand.
import Type, { type Static, type TSchema } from 'typebox';
import {
  array,
  boolean,
  type CamelCase,
  type Decoder,
  decodeBody,
  enumOf,
  integer,
  literal,
  nullable,
  number,
  object,
  optional,
  record,
  refine,
  refusedAsBadRequest,
  string,
  unknownJson,
} from './decode.ts';
import { problem } from './problem.ts';

// ---- schema annotations -----------------------------------------------------------------------

/** A rule that is not shape, kept in its own module and called from here (a domain check). */
interface ValueRule {
  check: (value: never) => string | null;
  code: string;
}

// Symbol-keyed so that they never reach the document; TypeBox's wrappers copy them along.
const RULE: unique symbol = Symbol('route-schema.rule');
const BAD_REQUEST: unique symbol = Symbol('route-schema.bad-request');
const NOT_FOUND: unique symbol = Symbol('route-schema.not-found');
const MAX_BYTES: unique symbol = Symbol('route-schema.max-bytes');

type Annotated = TSchema & {
  [RULE]?: ValueRule;
  [BAD_REQUEST]?: true;
  [NOT_FOUND]?: string;
  [MAX_BYTES]?: number;
};

/**
 * The schema with a domain rule (RedirectURI, scope grammar, identifier syntax...): `check`
 * returns null when the value is fine, else a short detail reported under `code` (422).
 */
export function withRule<S extends TSchema>(
  schema: S,
  check: (value: Static<S>) => string | null,
  code: string,
): S {
  (schema as Annotated)[RULE] = { check: check as ValueRule['check'], code };
  return schema;
}

/** A member whose every refusal is 400 invalid_request (decode.ts refusedAsBadRequest). */
export function refusedAs400<S extends TSchema>(schema: S): S {
  (schema as Annotated)[BAD_REQUEST] = true;
  return schema;
}

/**
 * A string whose size limit counts UTF-8 bytes, as most limits of the spec do. JSON Schema counts
 * characters, so the document states the byte limit in the description and `maxLength` (a byte
 * count is never below the character count, so that bound is implied).
 */
export function bytesString(maxBytes: number, opts: { minLength?: number; pattern?: string } = {}) {
  const s = Type.String({ ...opts, maxLength: maxBytes, description: `at most ${maxBytes} UTF-8 bytes` });
  (s as Annotated)[MAX_BYTES] = maxBytes;
  return s;
}

/** A JSON value (a free-form map, say) whose compact JSON text is at most `maxBytes` UTF-8 bytes. */
export function withMaxJsonBytes<S extends TSchema>(schema: S, maxBytes: number): S {
  (schema as Annotated)[MAX_BYTES] = maxBytes;
  return schema;
}

/** A path parameter naming a resource: a value that cannot be an id is simply not found. */
export function idParam(pattern: RegExp, notFound: string) {
  const s = Type.String({ pattern: pattern.source });
  (s as Annotated)[NOT_FOUND] = notFound;
  return s;
}

// ---- problems (RFC 9457) --------------------------------------------------------------------

export const FieldErrorSchema = Type.Object(
  { field: Type.String(), code: Type.String(), detail: Type.Optional(Type.String()) },
  { additionalProperties: false },
);

/** The body of every error answer: problem.ts problemBody(). */
export const ProblemSchema = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer({ minimum: 400, maximum: 599 }),
    code: Type.String(),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String()),
    errors: Type.Optional(Type.Array(FieldErrorSchema)),
  },
  { $id: 'Problem', title: 'Problem', additionalProperties: true },
);

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

/** A response served as application/problem+json. */
export interface ProblemResponse {
  description: string;
  content: { [PROBLEM_MEDIA_TYPE]: { schema: TSchema } };
}

/** Where a route names the problem body; the document lists it once, under components. */
export const ProblemRef = Type.Ref('Problem');

const problemResponse = (description: string): ProblemResponse => ({
  description,
  content: { [PROBLEM_MEDIA_TYPE]: { schema: ProblemRef } },
});

const PROBLEM_DESCRIPTIONS: Record<number, string> = {
  400: 'invalid_request: the request is malformed or of the wrong shape',
  401: 'unauthorized: no valid bearer token',
  403: 'forbidden, step_up_required, mfa_required or recovery_restricted',
  404: 'not_found',
  409: 'conflict',
  412: 'precondition_failed',
  413: 'invalid_request: the body is too large',
  415: 'invalid_request: the content type is not application/json',
  422: 'validation_failed: each refused member in errors',
  429: 'rate_limited',
  500: 'internal_error: an unexpected failure, without details',
  503: 'temporarily_unavailable or request_timeout',
};

/** The problem answers of a route, by status. */
export function problems(...statuses: number[]): Record<number, ProblemResponse> {
  return Object.fromEntries(
    statuses.map((s) => [s, problemResponse(PROBLEM_DESCRIPTIONS[s] ?? 'a problem')]),
  );
}

/** What a route that is not described yet answers on failure, in the document. */
export const UNDESCRIBED_RESPONSES = {
  default: { type: 'null', description: 'not described with a schema yet (docs/openapi.md)' },
  '4XX': problemResponse('a problem (RFC 9457) with its code'),
  '5XX': problemResponse('a problem (RFC 9457) with its code'),
};

/** A 204 answer: no body. */
export const NoContent = Type.Null({ description: 'No Content' });

// ---- route schema and handler input ---------------------------------------------------------

export interface RouteSchema {
  summary?: string;
  tags?: string[];
  params?: TSchema;
  querystring?: TSchema;
  headers?: TSchema;
  body?: TSchema;
  /** An absent body counts as {} (a body of optional members only). */
  bodyOptional?: boolean;
  response: Record<number, TSchema | ProblemResponse>;
}

/** A wire (snake_case) value as the handler receives it: camelCase member names (decode.ts). */
export type CamelKeys<T> = T extends readonly (infer I)[]
  ? CamelKeys<I>[]
  : T extends Record<string, unknown>
    ? { [K in keyof T as K extends string ? CamelCase<K> : K]: CamelKeys<T[K]> }
    : T;

export type BodyOf<S extends RouteSchema> = S['body'] extends TSchema
  ? CamelKeys<Static<S['body']>>
  : undefined;
export type ParamsOf<S extends RouteSchema> = S['params'] extends TSchema
  ? Static<S['params']>
  : Record<never, never>;

// ---- compiling a schema into a decoder ------------------------------------------------------

type Json = Record<string, unknown>;
const isNull = (s: Json): boolean => s.type === 'null';
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/**
 * The decode.ts decoder a body schema stands for, built once per route. Throws (when the route is
 * registered, never per request) on a keyword it does not know, so a schema cannot say more than
 * the decoder checks.
 */
export function decoderFor(schema: TSchema): Decoder<unknown> {
  const s = schema as Annotated & Json;
  let d = plainDecoder(s);
  if (s[RULE]) d = refine(d, s[RULE].check as (v: unknown) => string | null, s[RULE].code);
  if (s[BAD_REQUEST]) d = refusedAsBadRequest(d);
  return d;
}

/** Keywords the decoders check or that only describe; any other would be a promise not kept. */
const KNOWN = new Set([
  ...['type', 'description', 'title', 'default', 'examples', 'anyOf', 'enum', 'const'],
  ...['minLength', 'maxLength', 'pattern', 'minimum', 'maximum'],
  ...['items', 'minItems', 'maxItems', 'uniqueItems'],
  ...['properties', 'required', 'additionalProperties', 'patternProperties', 'maxProperties'],
]);

function plainDecoder(s: Annotated & Json): Decoder<unknown> {
  const unknown = Object.keys(s).find((k) => !KNOWN.has(k));
  if (unknown) throw new Error(`route schema: unsupported keyword ${unknown} in ${JSON.stringify(s)}`);
  if (s.properties && s.additionalProperties !== false)
    throw new Error(
      'route schema: an object body must say additionalProperties: false (unknown members are refused)',
    );
  const anyOf = s.anyOf as Json[] | undefined;
  if (anyOf) {
    const others = anyOf.filter((a) => !isNull(a));
    if (others.length === 1 && others.length < anyOf.length)
      return nullable(decoderFor(others[0] as TSchema));
    throw new Error(`route schema: anyOf is only supported as nullable, got ${JSON.stringify(s)}`);
  }
  if (Array.isArray(s.enum)) return enumOf(s.enum as string[]);
  if (s.const !== undefined) return literal(s.const as string | number | boolean);
  switch (s.type) {
    case 'object':
      return objectDecoder(s);
    case 'array':
      return array(decoderFor(s.items as TSchema), {
        ...(num(s.minItems) !== undefined ? { minItems: num(s.minItems) } : {}),
        ...(num(s.maxItems) !== undefined ? { maxItems: num(s.maxItems) } : {}),
        unique: s.uniqueItems === true,
      });
    case 'string':
      return string({
        ...(num(s.minLength) !== undefined ? { minLength: num(s.minLength) } : {}),
        ...(s[MAX_BYTES] !== undefined
          ? { maxBytes: s[MAX_BYTES] }
          : num(s.maxLength) !== undefined
            ? { maxLength: num(s.maxLength) }
            : {}),
        ...(typeof s.pattern === 'string' ? { pattern: new RegExp(s.pattern.replace(/^\^|\$$/g, '')) } : {}),
      });
    case 'integer':
    case 'number': {
      const range = { ...(num(s.minimum) !== undefined ? { min: num(s.minimum) } : {}) };
      if (num(s.maximum) !== undefined) Object.assign(range, { max: num(s.maximum) });
      return s.type === 'integer' ? integer(range) : number(range);
    }
    case 'boolean':
      return boolean();
    case undefined:
      if (Object.keys(s).length === 0) {
        const maxBytes = (s as Annotated)[MAX_BYTES];
        return unknownJson(maxBytes === undefined ? {} : { maxBytes });
      }
  }
  throw new Error(`route schema: unsupported schema ${JSON.stringify(s)}`);
}

function objectDecoder(s: Json): Decoder<unknown> {
  const props = s.properties as Record<string, TSchema> | undefined;
  const pattern = s.patternProperties as Record<string, TSchema> | undefined;
  if (!props && pattern) {
    const [value] = Object.values(pattern);
    const maxEntries = num(s.maxProperties);
    const maxBytes = (s as Annotated)[MAX_BYTES];
    return record(decoderFor(value as TSchema), {
      ...(maxEntries === undefined ? {} : { maxEntries }),
      ...(maxBytes === undefined ? {} : { maxBytes }),
    });
  }
  const required = new Set((s.required as string[] | undefined) ?? []);
  const shape: Record<string, Decoder<unknown>> = {};
  for (const [name, member] of Object.entries(props ?? {})) {
    const d = decoderFor(member);
    const fallback = (member as Json).default;
    shape[name] = required.has(name) ? d : fallback !== undefined ? optional(d, fallback) : optional(d);
  }
  return object(shape);
}

/** decoderFor with the type the schema gives (camelCase members), for a body read elsewhere too. */
export const schemaDecoder = <S extends TSchema>(schema: S): Decoder<CamelKeys<Static<S>>> =>
  decoderFor(schema) as Decoder<CamelKeys<Static<S>>>;

/** The body as the handler receives it: decoded, or the body's problem thrown. */
export function bodyReader(schema: RouteSchema): (body: unknown) => unknown {
  if (!schema.body) return () => undefined;
  const decoder = decoderFor(schema.body);
  return schema.bodyOptional
    ? (body) => decodeBody(decoder, body ?? {})
    : (body) => decodeBody(decoder, body);
}

/** Path parameters checked against their patterns; one that cannot match is not found. */
export function paramsReader(schema: RouteSchema): (params: Record<string, string>) => void {
  const props = (schema.params as (TSchema & { properties?: Record<string, Annotated> }) | undefined)
    ?.properties;
  const checks = Object.entries(props ?? {}).flatMap(([name, p]) => {
    const detail = p[NOT_FOUND];
    const source = (p as Json).pattern;
    return detail && typeof source === 'string' ? [{ name, re: new RegExp(source), detail }] : [];
  });
  return (params) => {
    for (const c of checks) if (!c.re.test(params[c.name] ?? '')) throw problem.notFound(c.detail);
  };
}
