// Typed problems (RFC 9457). Every error a client can see is one of these; the mapper in
// problem-mapper.ts is the only place that turns them into responses.

export type ProblemCode =
  | 'invalid_request'
  | 'unauthorized'
  | 'forbidden'
  | 'step_up_required'
  | 'mfa_required'
  | 'recovery_restricted'
  | 'not_found'
  | 'method_not_allowed'
  | 'conflict'
  | 'contact_unverified'
  | 'last_sign_in_method'
  | 'last_owner'
  | 'invitation_resend_limit'
  | 'membership_not_active'
  | 'builtin_role_immutable'
  | 'incompatible_roles'
  | 'cursor_expired'
  | 'precondition_failed'
  | 'validation_failed'
  | 'rate_limited'
  | 'feature_disabled'
  | 'connection_not_allowed'
  | 'temporarily_unavailable'
  | 'request_timeout'
  | 'internal_error';

/** One entry of a validation problem's `errors` list. */
export interface FieldError {
  field: string;
  code: string;
  detail?: string;
}

export interface ProblemExtra {
  errors?: FieldError[];
  [member: string]: unknown;
}

export class Problem extends Error {
  readonly status: number;
  readonly code: ProblemCode;
  readonly detail: string | undefined;
  readonly extra: ProblemExtra | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    status: number,
    code: ProblemCode,
    detail?: string,
    extra?: ProblemExtra,
    headers?: Record<string, string>,
  ) {
    super(detail ? `${code}: ${detail}` : code);
    this.name = 'Problem';
    this.status = status;
    this.code = code;
    this.detail = detail;
    this.extra = extra;
    this.headers = headers;
  }
}

export const problem = {
  invalidRequest: (detail?: string, errors?: FieldError[]) =>
    new Problem(400, 'invalid_request', detail, errors ? { errors } : undefined),
  payloadTooLarge: (limit: number) =>
    new Problem(413, 'invalid_request', `request body exceeds ${limit} bytes`),
  unsupportedMediaType: (detail = 'content type must be application/json') =>
    new Problem(415, 'invalid_request', detail),
  headersTooLarge: (limit: number) =>
    new Problem(431, 'invalid_request', `request headers exceed ${limit} bytes`),
  unauthorized: (detail?: string, headers?: Record<string, string>) =>
    new Problem(401, 'unauthorized', detail, undefined, headers),
  forbidden: (detail?: string) => new Problem(403, 'forbidden', detail),
  notFound: (detail = 'no such resource') => new Problem(404, 'not_found', detail),
  methodNotAllowed: () => new Problem(405, 'method_not_allowed', 'method not allowed on this path'),
  conflict: (detail?: string) => new Problem(409, 'conflict', detail),
  preconditionFailed: (detail = 'the resource changed since it was read') =>
    new Problem(412, 'precondition_failed', detail),
  validation: (errors: FieldError[], detail = 'the request has invalid values') =>
    new Problem(422, 'validation_failed', detail, { errors }),
  unavailable: (detail?: string, headers?: Record<string, string>) =>
    new Problem(503, 'temporarily_unavailable', detail, undefined, headers),
  overloaded: () =>
    new Problem(503, 'temporarily_unavailable', 'server is at capacity', undefined, { 'retry-after': '2' }),
  timeout: () => new Problem(503, 'request_timeout', 'the request took too long and was cancelled'),
  internal: () => new Problem(500, 'internal_error', 'an unexpected error occurred'),
};

/** Human title per status, for the `title` member. */
export function titleFor(status: number): string {
  return TITLES[status] ?? 'Error';
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  412: 'Precondition Failed',
  413: 'Content Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** The RFC 9457 body for a problem. `type` is a stable URN per code. */
export function problemBody(p: Problem, instance?: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    type: `urn:proudauth:problem:${p.code}`,
    title: titleFor(p.status),
    status: p.status,
    code: p.code,
  };
  if (p.detail) body.detail = p.detail;
  if (instance) body.instance = instance;
  if (p.extra) for (const [k, v] of Object.entries(p.extra)) if (v !== undefined) body[k] = v;
  return body;
}
