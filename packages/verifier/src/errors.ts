// Why a token was not accepted. A resource server answers `invalid_token` with 401 and the others
// with 503: the verifier could not decide, and deciding nothing means denying (fail closed).

export type VerificationCode =
  /** The token is malformed, badly signed, for someone else, expired or revoked. */
  | 'invalid_token'
  /** The DPoP proof of a key-bound token is missing, bad, replayed or by another key (RFC 9449). */
  | 'invalid_dpop_proof'
  /** The revocation state is older than the staleness bound (bounded-state mode). */
  | 'stale_state'
  /** The service could not be asked (introspection mode) or its keys could not be fetched. */
  | 'unavailable';

export class VerificationError extends Error {
  readonly code: VerificationCode;
  constructor(code: VerificationCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'VerificationError';
    this.code = code;
  }

  /** The HTTP status a resource server answers with. */
  get status(): 401 | 503 {
    return this.code === 'invalid_token' || this.code === 'invalid_dpop_proof' ? 401 : 503;
  }
}

export const invalidToken = (why: string, cause?: unknown) =>
  new VerificationError('invalid_token', why, cause === undefined ? undefined : { cause });
