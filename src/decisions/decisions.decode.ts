// Decoding of decision requests (spec doc 1, Authorization decision; Limits: decision batch 100).
// Two layers: the JSON's shape (syntax, unknown members, content type) is a 400 problem for the
// whole request; a well-formed request whose members make no sense (a missing action, an id that
// is not a string) is answered, as a decision with reason INVALID_REQUEST, for that check alone.
import {
  type Decoded,
  type Decoder,
  decodeBody,
  integer,
  object,
  optional,
  refusedAsBadRequest,
  string,
  unknownJson,
} from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { NAME } from '../relationships/expression.ts';
import { OBJECT_ID } from '../relationships/relationships.decode.ts';

/** doc 1 and doc 2, Limits: decision batch. */
export const MAX_BATCH_CHECKS = 100;

export interface CheckRequest {
  subjectToken: string;
  action: string;
  resource: { type: string; id: string | null; orgId: string | null; projectId: string | null };
  context: Record<string, unknown>;
}

export type CheckItem = { ok: true; request: CheckRequest } | { ok: false; why: string };

const any = () => optional(unknownJson());
const resourceShape = object({ type: any(), id: any(), org_id: any(), project_id: any() });
const checkShape = object({ subject_token: any(), action: any(), resource: any(), context: any() });

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const ACTION = /^[\x21-\x7e]{1,128}$/;
const ORG_OR_PROJECT_ID = /^[\x21-\x7e]{1,128}$/;

/** The members' meaning; a string saying what is wrong, or the request. */
function meaning(c: Decoded<typeof checkShape>, maxTokenBytes: number): CheckItem {
  const bad = (why: string): CheckItem => ({ ok: false, why });
  const token = c.subjectToken;
  if (typeof token !== 'string' || token.length === 0) return bad('subject_token must be a string');
  if (Buffer.byteLength(token) > maxTokenBytes) return bad('subject_token is too large');
  if (typeof c.action !== 'string' || !ACTION.test(c.action))
    return bad('action must be a permission or relation name');
  if (!isObject(c.resource)) return bad('resource must be an object');
  // The member names were checked by resourceShape; only the values are judged here.
  const r = decodeBody(resourceShape, c.resource);
  if (typeof r.type !== 'string' || !NAME.test(r.type)) return bad('resource.type must be a type name');
  const optionalText = (v: unknown, pattern: RegExp): string | null | false =>
    v === undefined ? null : typeof v === 'string' && pattern.test(v) ? v : false;
  const id = optionalText(r.id, new RegExp(`^(?:${OBJECT_ID.source})$`, 'u'));
  if (id === false || (id !== null && Buffer.byteLength(id) > 256))
    return bad('resource.id must be a string id');
  const orgId = optionalText(r.orgId, ORG_OR_PROJECT_ID);
  if (orgId === false) return bad('resource.org_id must be a string id');
  const projectId = optionalText(r.projectId, ORG_OR_PROJECT_ID);
  if (projectId === false) return bad('resource.project_id must be a string id');
  if (c.context !== undefined && !isObject(c.context)) return bad('context must be an object');
  return {
    ok: true,
    request: {
      subjectToken: token,
      action: c.action,
      resource: { type: r.type, id, orgId, projectId },
      context: (c.context as Record<string, unknown> | undefined) ?? {},
    },
  };
}

/** One decision request; a shape error throws the 400 problem. */
export function decodeCheckItem(value: unknown, maxTokenBytes: number): CheckItem {
  if (!isObject(value)) return { ok: false, why: 'a decision request must be an object' };
  const c = checkShape(value);
  if (isObject(c.resource)) decodeBody(resourceShape, c.resource);
  return meaning(c, maxTokenBytes);
}

export function decodeCheck(body: unknown, maxTokenBytes: number): CheckItem {
  if (!isObject(body)) throw problem.invalidRequest('the body must be a JSON object');
  return decodeCheckItem(body, maxTokenBytes);
}

const batchShape = object({ checks: unknownJson() });

export function decodeBatch(body: unknown, maxTokenBytes: number): CheckItem[] {
  const { checks } = batchShape(body);
  if (!Array.isArray(checks)) throw problem.invalidRequest('checks must be an array of decision requests');
  if (checks.length < 1 || checks.length > MAX_BATCH_CHECKS) {
    const detail = `checks must hold 1 to ${MAX_BATCH_CHECKS} decision requests (got ${checks.length})`;
    const code = checks.length < 1 ? 'too_few' : 'too_many';
    throw problem.validation([{ field: 'checks', code, detail }], detail);
  }
  return checks.map((c) => decodeCheckItem(c, maxTokenBytes));
}

// ---- list-objects ------------------------------------------------------------------------------

/** doc 2, Limits: list-objects pages of at most 500. */
export const MAX_LIST_PAGE = 500;
export const DEFAULT_LIST_PAGE = 100;

const listShape: Decoder<{
  subjectToken: string;
  action: string;
  resourceType: string;
  orgId?: string;
  context?: unknown;
  pageSize: number;
  cursor?: string;
}> = object({
  subject_token: string({ minLength: 1 }),
  action: string({ pattern: ACTION }),
  resource_type: string({ pattern: NAME }),
  org_id: optional(string({ pattern: ORG_OR_PROJECT_ID })),
  context: any(),
  page_size: optional(integer({ min: 1, max: MAX_LIST_PAGE }), DEFAULT_LIST_PAGE),
  // An invalid cursor is 400 (spec doc 1, Errors), whatever is wrong with it.
  cursor: refusedAsBadRequest(optional(string({ minLength: 1, maxLength: 1024, pattern: /[A-Za-z0-9_-]+/ }))),
});

export type ListObjectsRequest = Decoded<typeof listShape>;

/** list-objects is a listing, not a decision: an invalid member is the body's problem. */
export function decodeListObjects(body: unknown, maxTokenBytes: number): ListObjectsRequest {
  const r = listShape(body);
  if (Buffer.byteLength(r.subjectToken) > maxTokenBytes) {
    const detail = `at most ${maxTokenBytes} bytes`;
    throw problem.validation(
      [{ field: 'subject_token', code: 'too_long', detail }],
      'subject_token is too large',
    );
  }
  if (r.context !== undefined && !isObject(r.context))
    throw problem.invalidRequest('context must be an object');
  return r;
}
