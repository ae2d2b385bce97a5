// PostgreSQL error classification by SQLSTATE; both drivers expose `code` and `constraint`.

interface PgLikeError {
  code?: unknown;
  constraint?: unknown;
}

const asPg = (e: unknown): PgLikeError => (typeof e === 'object' && e !== null ? (e as PgLikeError) : {});

export const isUniqueViolation = (e: unknown, constraint?: string): boolean =>
  asPg(e).code === '23505' && (constraint === undefined || asPg(e).constraint === constraint);

/** Serialization failure or deadlock: the transaction may succeed when run again. */
export const isRetryable = (e: unknown): boolean => asPg(e).code === '40001' || asPg(e).code === '40P01';

export const isStatementTimeout = (e: unknown): boolean => asPg(e).code === '57014';

/** Connection-level failures: the database is unreachable rather than the query wrong. */
export function isConnectionError(e: unknown): boolean {
  const code = asPg(e).code;
  if (typeof code !== 'string') return false;
  return code.startsWith('08') || code === '57P01' || code === '57P03' || code === 'ECONNREFUSED';
}

/** Text PostgreSQL cannot store (a NUL character, also inside jsonb) or a malformed value for a typed column. */
export const isInvalidText = (e: unknown): boolean =>
  asPg(e).code === '22021' || asPg(e).code === '22P02' || asPg(e).code === '22P05';
