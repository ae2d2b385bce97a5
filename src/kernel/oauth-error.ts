// Errors of the OAuth protocol endpoints (token, introspection, revocation): RFC 6749 section 5.2
// codes plus RFC 8707 invalid_target. Thrown like Problem; the endpoint renders `oauthErrorBody`.

export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'invalid_target'
  | 'temporarily_unavailable'
  // RFC 8628 section 3.5: an abuse budget of the token endpoint (or of client authentication) is
  // spent (spec doc 1, Errors, 429)
  | 'slow_down'
  // RFC 8628 section 3.5: answers to a device polling the token endpoint
  | 'authorization_pending'
  | 'expired_token'
  | 'access_denied'
  // RFC 6750 section 3.1, for bearer-protected protocol endpoints (UserInfo)
  | 'invalid_token'
  | 'insufficient_scope'
  // RFC 9126 section 2.3: the PAR endpoint answers the authorization endpoint's errors in JSON
  | 'unsupported_response_type'
  | 'access_denied'
  | 'invalid_request_object'
  // RFC 9449 sections 5 and 8: a bad DPoP proof, or one without the server nonce asked for
  | 'invalid_dpop_proof'
  | 'use_dpop_nonce';

export class OAuthError extends Error {
  readonly status: number;
  readonly error: OAuthErrorCode;
  readonly description: string | undefined;
  readonly headers: Record<string, string>;
  /** For logs only, never rendered: which check failed when the wire answer is deliberately vague. */
  readonly debug: string | undefined;

  constructor(
    status: number,
    error: OAuthErrorCode,
    description?: string,
    headers: Record<string, string> = {},
    debug?: string,
  ) {
    super(description ? `${error}: ${description}` : error);
    this.name = 'OAuthError';
    this.status = status;
    this.error = error;
    this.description = description;
    this.headers = headers;
    this.debug = debug;
  }
}

/** A Basic challenge for the WWW-Authenticate header (RFC 7617: realm, and the UTF-8 charset). */
export function basicChallenge(realm: string): string {
  return `Basic realm="${realm.replace(/["\\]/g, '\\$&')}", charset="UTF-8"`;
}

export const oauthError = {
  invalidRequest: (description?: string) => new OAuthError(400, 'invalid_request', description),
  /**
   * 401 with one fixed description, whatever failed (unknown client, wrong secret, disabled,
   * wrong method), so the answer never tells which; `debug` says it in the logs.
   */
  invalidClient: (opts: { challenge?: string; debug?: string } = {}) =>
    new OAuthError(
      401,
      'invalid_client',
      'client authentication failed',
      opts.challenge ? { 'www-authenticate': opts.challenge } : {},
      opts.debug,
    ),
  invalidGrant: (description?: string) => new OAuthError(400, 'invalid_grant', description),
  unauthorizedClient: (description?: string) => new OAuthError(400, 'unauthorized_client', description),
  unsupportedGrantType: (description?: string) => new OAuthError(400, 'unsupported_grant_type', description),
  invalidScope: (description?: string) => new OAuthError(400, 'invalid_scope', description),
  invalidTarget: (description?: string) => new OAuthError(400, 'invalid_target', description),
  slowDown: (retryAfterSeconds: number, description = 'the client is over its request budget') =>
    new OAuthError(429, 'slow_down', description, { 'retry-after': String(retryAfterSeconds) }),
  /** RFC 8628 section 3.5: a device polled faster than its interval (400, unlike the budget's 429). */
  pollingTooFast: (description: string) => new OAuthError(400, 'slow_down', description),
  authorizationPending: (description?: string) => new OAuthError(400, 'authorization_pending', description),
  expiredToken: (description?: string) => new OAuthError(400, 'expired_token', description),
  accessDenied: (description?: string) => new OAuthError(400, 'access_denied', description),
  temporarilyUnavailable: (description?: string, retryAfterSeconds?: number) =>
    new OAuthError(
      503,
      'temporarily_unavailable',
      description,
      retryAfterSeconds === undefined ? {} : { 'retry-after': String(retryAfterSeconds) },
    ),
};

// RFC 6749 section 5.2 limits error_description to printable ASCII without `"` and `\`.
const DESCRIPTION_CHAR = /[^\x20-\x21\x23-\x5b\x5d-\x7e]/g;

/** The RFC 6749 section 5.2 JSON body. */
export function oauthErrorBody(e: OAuthError): { error: OAuthErrorCode; error_description?: string } {
  return e.description
    ? { error: e.error, error_description: e.description.replace(DESCRIPTION_CHAR, '?') }
    : { error: e.error };
}
