// The single place where errors become HTTP responses (RFC 9457 problem documents).
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  DatabaseUnavailable,
  isConnectionError,
  isInvalidText,
  isRetryable,
  isStatementTimeout,
  isUniqueViolation,
} from '../db/pg-errors.ts';
import type { Logger } from '../log.ts';
import { Problem, problem, problemBody } from './problem.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** Seconds a client is asked to wait before retrying a request the database could not serve. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * The 503 for a database that cannot serve the request now: unreachable, restarting, too slow, or
 * a serialization conflict that failed its one retry (spec doc 1, Errors: dependency outage). The
 * use case's transaction did not commit (unless only its acknowledgement was lost, which single-use
 * rules already cover), so the client may retry. Null for other errors.
 */
export function dependencyOutage(err: unknown): Problem | null {
  const headers = { 'retry-after': String(DATABASE_RETRY_AFTER_SECONDS) };
  if (isRetryable(err))
    return problem.unavailable('the request conflicted with another one; retry it', headers);
  if (isStatementTimeout(err))
    return new Problem(503, 'request_timeout', 'the database did not answer in time', undefined, headers);
  if (isConnectionError(err)) return problem.unavailable('the database is unavailable', headers);
  return null;
}

/** One warning per refused request: which request, and why, without the statement or its values. */
export function logOutage(log: Logger, err: unknown, requestId: string): void {
  log.warn(
    {
      request_id: requestId,
      reason: err instanceof DatabaseUnavailable ? err.reason : 'conflict',
      err: String(err),
    },
    'database could not serve the request; answered 503',
  );
}

/** Turns any thrown value into the Problem the client sees; unexpected errors become a bare 500. */
export function toProblem(err: unknown, log: Logger, requestId: string, bodyLimit = 0): Problem {
  if (err instanceof Problem) return err;
  const fe = err as Partial<FastifyError>;
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      // Fastify's message carries no number; the route's limit is what the client needs to know.
      return problem.payloadTooLarge(bodyLimit);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_EMPTY_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
      return problem.unsupportedMediaType();
  }
  if (isUniqueViolation(err)) return problem.conflict('the resource already exists');
  // Input that reached SQL but cannot be stored as text (a NUL character): the request is at fault.
  if (isInvalidText(err))
    return problem.invalidRequest('the request contains characters that cannot be stored');
  const outage = dependencyOutage(err);
  if (outage) {
    logOutage(log, err, requestId);
    return outage;
  }
  if (typeof fe.statusCode === 'number' && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new Problem(fe.statusCode, 'invalid_request', 'the request could not be read');
  }
  log.error({ err, request_id: requestId }, 'unhandled error');
  return problem.internal();
}

export function sendProblem(reply: FastifyReply, p: Problem): FastifyReply {
  if (p.headers) reply.headers(p.headers);
  return reply.code(p.status).type(PROBLEM_CONTENT_TYPE).send(problemBody(p));
}

export function installProblemHandlers(app: FastifyInstance, log: Logger): void {
  app.setErrorHandler((err, req: FastifyRequest, reply) => {
    sendProblem(reply, toProblem(err, log, String(req.id), req.routeOptions.bodyLimit));
  });
  app.setNotFoundHandler((_req, reply) => {
    sendProblem(reply, problem.notFound());
  });
}
