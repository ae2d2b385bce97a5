// Strict decoders of the relationship model API (docs/authorization.md, "Relationship model
// API"; doc 2, Limits: Relationships). Shapes (400) and sizes (422) are checked here; whether a
// tuple fits its type is the service's rule (422).
import { array, type Decoded, object, optional, record, string } from '../platform/http/decode.ts';
import { cursorBinding, makeCursor, openCursor, pageLimit, queryParams } from '../platform/http/keyset.ts';
import { problem } from '../platform/http/problem.ts';
import { MAX_EXPRESSION_CHARS, NAME } from './expression.ts';
import { MAX_PERMISSIONS, MAX_RELATIONS, MAX_SUBJECT_TYPES } from './model.ts';
import type { TupleCursor, TupleFilter } from './relationships.repo.ts';

/** doc 2, Limits: 1..100 tuple writes per request (writes and deletes together). */
export const MAX_TUPLE_OPERATIONS = 100;
/** doc 2, Limits: 1000 tuples per object. */
export const MAX_TUPLES_PER_OBJECT = 1000;

const name = () => string({ minLength: 1, maxLength: 63, pattern: NAME });
/** Object and subject ids: no whitespace, control characters or `#` (it separates a subject set). */
export const OBJECT_ID = /[^\s#\p{Cc}]+/u;
const objectId = () => string({ minBytes: 1, maxBytes: 256, pattern: OBJECT_ID });

export const decodeTypeBody = object({
  // Sizes past the limits are the 422 of compileType, so a client sees every problem at once;
  // the decoder only keeps hostile sizes out.
  relations: record(array(string({ minLength: 1, maxLength: 128 }), { maxItems: MAX_SUBJECT_TYPES * 2 }), {
    maxEntries: MAX_RELATIONS * 4,
  }),
  permissions: record(string({ minLength: 1, maxLength: MAX_EXPRESSION_CHARS }), {
    maxEntries: MAX_PERMISSIONS * 4,
  }),
});
export type TypeBody = Decoded<typeof decodeTypeBody>;

const tupleDecoder = object({
  object_type: name(),
  object_id: objectId(),
  relation: name(),
  subject_type: name(),
  subject_id: objectId(),
  subject_relation: optional(name()),
  org_id: optional(string({ minLength: 1, maxLength: 128 })),
});
export type TupleInput = Decoded<typeof tupleDecoder>;

const tupleOps = object({
  writes: optional(array(tupleDecoder, { maxItems: MAX_TUPLE_OPERATIONS + 1 }), []),
  deletes: optional(array(tupleDecoder, { maxItems: MAX_TUPLE_OPERATIONS + 1 }), []),
});

export function decodeTupleOps(body: unknown): { writes: TupleInput[]; deletes: TupleInput[] } {
  const ops = tupleOps(body);
  const n = ops.writes.length + ops.deletes.length;
  if (n < 1 || n > MAX_TUPLE_OPERATIONS) {
    const detail = `writes and deletes together must hold 1 to ${MAX_TUPLE_OPERATIONS} operations (got ${n})`;
    throw problem.validation([{ field: 'writes', code: n < 1 ? 'too_few' : 'too_many', detail }], detail);
  }
  return ops;
}

export const typeNameParam = (raw: string): string => {
  if (!NAME.test(raw)) throw problem.notFound('no such relationship type');
  return raw;
};

// ---- GET /authorization/tuples ----------------------------------------------------------------

const FILTERS = ['object_type', 'object_id', 'relation', 'subject_type', 'subject_id'] as const;

export interface TupleQuery {
  filter: TupleFilter;
  limit: number;
  after: TupleCursor | null;
  binding: string;
}

export function decodeTupleQuery(
  raw: unknown,
  pages: { defaultPageSize: number; maxPageSize: number },
  route: string,
): TupleQuery {
  const param = queryParams(raw, FILTERS);
  const values = FILTERS.map((k) => {
    const v = param(k);
    if (v !== null && (v.length === 0 || Buffer.byteLength(v) > 256))
      throw problem.invalidRequest(`${k} must be 1 to 256 bytes`);
    return v;
  });
  const [objectType = null, objectId = null, relation = null, subjectType = null, subjectId = null] = values;
  const limit = pageLimit(param('limit'), pages);
  const binding = cursorBinding([route, values]);
  const after = openCursor(param('cursor'), binding, isTupleKey, MAX_TUPLE_CURSOR_CHARS);
  return {
    filter: { objectType, objectId, relation, subjectType, subjectId },
    limit,
    after: after === null ? null : (JSON.parse(after) as TupleCursor),
    binding,
  };
}

// A tuple's key is six strings of at most 256 bytes each.
const MAX_TUPLE_CURSOR_CHARS = 4096;

/** The page's last tuple key, carried as JSON text in the shared cursor form. */
export const makeTupleCursor = (last: TupleCursor, binding: string): string =>
  makeCursor(JSON.stringify(last), binding);

function isTupleKey(text: string): boolean {
  try {
    const v: unknown = JSON.parse(text);
    return Array.isArray(v) && v.length === 6 && v.every((x) => typeof x === 'string');
  } catch {
    return false;
  }
}
