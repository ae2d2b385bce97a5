// Operator log lines for the token endpoint (docs/operations.md, Logging): grant type, client and
// the outcome with its OAuth error code. Never a code, token, secret or assertion.
import { OAuthError } from '../kernel/oauth-error.ts';
import type { Logger } from '../platform/log.ts';

// A client_id as a client would register it; anything else (an email pasted in) is not logged.
const CLIENT_ID = /^[A-Za-z0-9._:~-]{1,128}$/;

/** The request a token outcome belongs to. */
export interface TokenRequest {
  requestId: string;
  realm: string;
  form: URLSearchParams;
}

export interface TokenOutcome {
  grantType: string;
  /** The authenticated client, else the client_id the request named. */
  clientId: string | null;
  error?: unknown;
}

export function logTokenOutcome(log: Logger, r: TokenRequest, o: TokenOutcome): void {
  const named = o.clientId ?? r.form.get('client_id');
  const fields = {
    request_id: r.requestId,
    realm: r.realm,
    grant_type: o.grantType,
    ...(named && CLIENT_ID.test(named) ? { client_id: named } : {}),
  };
  if (o.error === undefined) {
    log.info({ ...fields, outcome: 'success' }, 'token issued');
    return;
  }
  const e = o.error instanceof OAuthError ? o.error : null;
  log.warn(
    {
      ...fields,
      outcome: 'failure',
      error: e ? e.error : 'server_error',
      ...(e?.debug ? { reason: e.debug } : {}),
    },
    'token request refused',
  );
}
