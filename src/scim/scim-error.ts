// SCIM errors (RFC 7644 §3.12): the SCIM routes answer in this format, not as RFC 9457 problems,
// because SCIM clients (Entra ID, Okta) read `status` and `scimType`.
import type { FastifyReply } from 'fastify';
import { Problem } from '../platform/http/problem.ts';

export const SCIM_ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error';
export const SCIM_CONTENT_TYPE = 'application/scim+json; charset=utf-8';

export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue'
  | 'invalidVers'
  | 'sensitive';

export class ScimError extends Error {
  readonly status: number;
  readonly scimType: ScimType | null;
  readonly detail: string;
  readonly headers: Record<string, string>;
  constructor(
    status: number,
    scimType: ScimType | null,
    detail: string,
    headers: Record<string, string> = {},
  ) {
    super(detail);
    this.status = status;
    this.scimType = scimType;
    this.detail = detail;
    this.headers = headers;
  }
}

/** Maps what a shared service threw (a Problem) to the SCIM error a client expects. */
export function scimErrorOf(e: unknown): ScimError | null {
  if (e instanceof ScimError) return e;
  if (!(e instanceof Problem)) return null;
  const detail = e.detail ?? e.code;
  if (e.status === 409) return new ScimError(409, 'uniqueness', detail);
  // A body that is not strict JSON is a syntax error; a value a shared rule refuses is invalidValue.
  if (e.status === 400 && e.code === 'invalid_request') return new ScimError(400, 'invalidSyntax', detail);
  if (e.status === 422 || e.status === 400) return new ScimError(400, 'invalidValue', detail);
  return new ScimError(e.status, null, detail, e.headers ?? {});
}

export function sendScimError(reply: FastifyReply, e: ScimError): FastifyReply {
  return reply
    .code(e.status)
    .headers(e.headers)
    .header('content-type', SCIM_CONTENT_TYPE)
    .send({
      schemas: [SCIM_ERROR_SCHEMA],
      status: String(e.status),
      ...(e.scimType ? { scimType: e.scimType } : {}),
      detail: e.detail,
    });
}
