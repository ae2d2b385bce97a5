// PostgreSQL error classification by SQLSTATE; both drivers expose `code` and `constraint`. Faults of
// the database as a dependency (unreachable, restarting, too slow) become one typed error at the Db
// boundary, so callers and the problem mapper see one shape whatever the driver said.

interface PgLikeError {
  code?: unknown;
  constraint?: unknown;
  message?: unknown;
  errors?: unknown;
}

const asPg = (e: unknown): PgLikeError => (typeof e === 'object' && e !== null ? (e as PgLikeError) : {});

export const isUniqueViolation = (e: unknown, constraint?: string): boolean =>
  asPg(e).code === '23505' && (constraint === undefined || asPg(e).constraint === constraint);

/** Serialization failure or deadlock: the transaction may succeed when run again. */
export const isRetryable = (e: unknown): boolean => asPg(e).code === '40001' || asPg(e).code === '40P01';

/**
 * Why the database could not serve a statement. `connection`: unreachable, reset, restarting or out
 * of connections. `timeout`: storage.statement_timeout (57014) or no answer within the client's read
 * deadline. Either way the statement's transaction did not commit (or, for a lost commit
 * acknowledgement, the caller cannot know), and the request may be retried later.
 */
export type UnavailableReason = 'connection' | 'timeout';

export class DatabaseUnavailable extends Error {
  readonly reason: UnavailableReason;
  constructor(reason: UnavailableReason, cause: unknown) {
    super(`database unavailable (${reason}): ${describe(cause)}`, { cause });
    this.name = 'DatabaseUnavailable';
    this.reason = reason;
  }
}

// Driver errors carry no parameters or row data, so their message and code are safe to log.
function describe(e: unknown): string {
  const { code, message } = asPg(e);
  const text = typeof message === 'string' ? message : String(e);
  return typeof code === 'string' && !text.includes(code) ? `${code} ${text}` : text;
}

// SQLSTATEs of a database that cannot serve now but may soon: operator or crash shutdown, still
// starting, out of connection slots. 25006 is a write reaching a standby: this code never opens a
// read-only transaction, so it only happens while a failover moves the primary.
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '25006']);
const SOCKET_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'EAI_AGAIN',
]);
// node-postgres and pg-pool report these as plain Errors without a code.
const CONNECTION_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  'Connection closed',
  'PGlite is closed',
];

function isConnectionLevel(e: unknown, depth: number): boolean {
  const { code, message, errors } = asPg(e);
  if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code))) return true;
  if (typeof code === 'string' && SOCKET_CODES.has(code)) return true;
  if (typeof message === 'string' && CONNECTION_MESSAGES.some((m) => message.startsWith(m))) return true;
  // Node reports a failed connect to every address of a host as one AggregateError.
  if (depth < 2 && Array.isArray(errors)) return errors.some((x) => isConnectionLevel(x, depth + 1));
  return false;
}

/** Connection-level failures: the database is unreachable rather than the query wrong. */
export const isConnectionError = (e: unknown): boolean =>
  (e instanceof DatabaseUnavailable && e.reason === 'connection') || isConnectionLevel(e, 0);

/** storage.statement_timeout cancelled the statement, or the client stopped waiting for its answer. */
export const isStatementTimeout = (e: unknown): boolean =>
  (e instanceof DatabaseUnavailable && e.reason === 'timeout') ||
  asPg(e).code === '57014' ||
  asPg(e).message === 'Query read timeout';

/** Any fault of the database as a dependency: recoverable by waiting, never a bug in the caller. */
export const isDatabaseFault = (e: unknown): boolean => isConnectionError(e) || isStatementTimeout(e);

/** The driver error as DatabaseUnavailable when the database itself failed; anything else unchanged. */
export function toDatabaseError(e: unknown): unknown {
  if (e instanceof DatabaseUnavailable) return e;
  if (isStatementTimeout(e)) return new DatabaseUnavailable('timeout', e);
  if (isConnectionLevel(e, 0)) return new DatabaseUnavailable('connection', e);
  return e;
}

/** Text PostgreSQL cannot store (a NUL character, also inside jsonb) or a malformed value for a typed column. */
export const isInvalidText = (e: unknown): boolean =>
  asPg(e).code === '22021' || asPg(e).code === '22P02' || asPg(e).code === '22P05';
