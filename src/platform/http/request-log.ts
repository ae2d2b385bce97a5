// One log line per completed request (docs/operations.md, Logging). It names the route pattern,
// never the URL, so a token or an email in a path or query string cannot reach the log.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from '../log.ts';

// The realm-name grammar: a path segment of another shape (an email typed as a realm) is not logged.
const REALM_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// Probes and scrapes arrive every few seconds; their successes would drown everything else.
const QUIET_ROUTES = new Set(['/health/live', '/health/ready', '/metrics', '/status']);

// Identifiers this service issues (tx_..., a UUID); anything else in an id's place is not logged.
const ID = /^[A-Za-z0-9_-]{1,80}$/;

/** A realm name taken from a URL, when it has the shape of one. */
export const loggableRealmName = (name: unknown): string | undefined =>
  typeof name === 'string' && REALM_NAME.test(name) ? name : undefined;

/** An identifier taken from a URL, when it has the shape of one. */
export const loggableId = (id: unknown): string | undefined =>
  typeof id === 'string' && ID.test(id) ? id : undefined;

/** The realm a request addressed, when its route has one and the name is a realm name. */
export const loggableRealm = (req: FastifyRequest): string | undefined =>
  loggableRealmName((req.params as Record<string, unknown> | undefined)?.realm);

export function logRequest(
  log: Logger,
  req: FastifyRequest,
  reply: FastifyReply,
  route: string,
  /** The request's trace when tracing is on (docs/deployment.md, Tracing). */
  traceId?: string,
): void {
  const status = reply.statusCode;
  const realm = loggableRealm(req);
  const fields = {
    request_id: String(req.id),
    ...(traceId ? { trace_id: traceId } : {}),
    ...(realm ? { realm } : {}),
    method: req.method,
    route,
    // The client's address as budgets count it (behind trusted proxies, the forwarded one).
    client_address: req.clientAddress,
    status,
    duration_ms: Math.round(reply.elapsedTime * 10) / 10,
  };
  if (status >= 500) log.error(fields, 'request');
  else if (QUIET_ROUTES.has(route) && status < 400) log.debug(fields, 'request');
  else log.info(fields, 'request');
}
