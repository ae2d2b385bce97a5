// Builds a Fastify instance with the edge every route gets for free: strict JSON bodies, problem
// responses, request ids, size limits, a request deadline, in-flight shedding and HTTP metrics
// and a log line per request.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createTlsServer } from 'node:https';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
  LogController,
  type RouteHandlerMethod,
} from 'fastify';
import type { Logger } from '../log.ts';
import type { Metrics } from '../metrics.ts';
import { type Tracer, tracer } from '../tracing.ts';
import { ClientAddresses } from './client-address.ts';
import { clientCertificateOf } from './client-certificate.ts';
import { registerJsonBody } from './json-body.ts';
import { InflightGate, poolFor } from './load-shed.ts';
import { installOpenApi } from './openapi.ts';
import { type Problem, problem, problemBody } from './problem.ts';
import { installProblemHandlers, PROBLEM_CONTENT_TYPE, sendProblem } from './problem-mapper.ts';
import { requestIdFrom } from './request-id.ts';
import { loggableRealm, logRequest } from './request-log.ts';

/** How long an idle keep-alive connection stays open (Fastify's default for its own servers). */
const KEEP_ALIVE_IDLE_MS = 72_000;
export interface EdgeOptions {
  log: Logger;
  metrics: Metrics;
  maxBodyBytes: number;
  maxHeaderBytes: number;
  requestTimeoutMs: number;
  /** In-flight limit; absent for listeners that never shed (internal). */
  maxInflight?: number;
  /** How `req.clientAddress` is read (server.trusted_proxies); absent: the socket peer. */
  clientAddresses?: ClientAddresses;
  /**
   * Serve TLS with these PEM files, asking for (never requiring) a client certificate: the
   * mutual-TLS listener (server.mtls_listen, docs/oauth-mtls.md).
   */
  mutualTls?: { cert: string | Buffer; key: string | Buffer };
}

export interface RouteEntry {
  method: string;
  url: string;
}

const ROUTE_TABLES = new WeakMap<FastifyInstance, RouteEntry[]>();

/** Every route registered on an edge, as registered: what a test walks to check them all. */
export function routeTable(app: FastifyInstance): readonly RouteEntry[] {
  return ROUTE_TABLES.get(app) ?? [];
}

function writeRawProblem(res: ServerResponse, p: Problem): void {
  res.writeHead(p.status, { 'content-type': PROBLEM_CONTENT_TYPE, ...(p.headers ?? {}) });
  res.end(JSON.stringify(problemBody(p)));
}

export function buildEdge(opts: EdgeOptions): FastifyInstance {
  const gate = opts.maxInflight ? new InflightGate(opts.maxInflight) : null;
  const addresses = opts.clientAddresses ?? new ClientAddresses([]);
  // Tracing is installed (or not) before any edge is built; off, no hook below is added.
  const tracing = tracer();
  const app = Fastify({
    loggerInstance: opts.log as FastifyBaseLogger,
    // Fastify's own request lines carry the raw URL (query strings included); ours name the route.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => requestIdFrom(req.headers['x-request-id']),
    bodyLimit: opts.maxBodyBytes,
    // A client_id may have 128 characters, each percent-encoded as three (default: 100).
    routerOptions: { maxParamLength: 512 },
    return503OnClosing: false,
    // Shedding happens on the raw server, before routing or body parsing costs anything.
    serverFactory: (handler) => {
      const options = {
        maxHeaderSize: opts.maxHeaderBytes,
        requestTimeout: opts.requestTimeoutMs,
        headersTimeout: opts.requestTimeoutMs,
      };
      const listener = (req: IncomingMessage, res: ServerResponse) => {
        if (gate) {
          const pool = poolFor(req);
          if (!gate.tryEnter(pool)) {
            opts.metrics.loadShed.inc({ pool });
            writeRawProblem(res, problem.overloaded());
            return;
          }
          res.once('close', () => gate.leave());
        }
        // A traceparent is continued only from a trusted proxy; any other peer starts a trace.
        if (tracing) tracing.serve(req, res, addresses.peerIsTrusted(req), () => handler(req, res));
        else handler(req, res);
      };
      // Self-signed client certificates are legitimate (self_signed_tls_client_auth): the
      // handshake accepts any, and each use checks the certificate against what it is bound to.
      // Fastify's 72 s idle keep-alive applies only to servers it makes itself; Node's own 5 s is
      // shorter than the idle timeout of common load balancers (60 s), which would then write a
      // request on a socket this side has just closed.
      const server = opts.mutualTls
        ? // Fastify's factory type names the plain http.Server; an https.Server serves the same
          // request and response objects, which is all Fastify uses of it.
          (createTlsServer(
            { ...options, ...opts.mutualTls, requestCert: true, rejectUnauthorized: false },
            listener,
          ) as unknown as Server)
        : createServer(options, listener);
      server.keepAliveTimeout = KEEP_ALIVE_IDLE_MS;
      return server;
    },
    clientErrorHandler: (err, socket) => {
      if (!socket.writable) return;
      const p =
        (err as NodeJS.ErrnoException).code === 'HPE_HEADER_OVERFLOW'
          ? problem.headersTooLarge(opts.maxHeaderBytes)
          : problem.invalidRequest('malformed HTTP request');
      const body = JSON.stringify(problemBody(p));
      socket.end(
        `HTTP/1.1 ${p.status} ${p.status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
          `Connection: close\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    },
  });

  installOpenApi(app);
  const routes: RouteEntry[] = [];
  ROUTE_TABLES.set(app, routes);
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) routes.push({ method, url: r.url });
    if (tracing) r.handler = tracedHandler(tracing, `${[r.method].flat().join(',')} ${r.url}`, r.handler);
  });

  registerJsonBody(app);
  installProblemHandlers(app, opts.log);
  app.decorateRequest('clientAddress', {
    getter(this: FastifyRequest) {
      return addresses.of(this);
    },
  });
  app.decorateRequest('clientCertificate', {
    getter(this: FastifyRequest) {
      return clientCertificateOf(this.raw, addresses.peerIsTrusted(this));
    },
  });

  // Both hooks take Fastify's callback form: an async hook costs a promise and a microtask turn
  // on every request, and these two run on every request.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    // Past the deadline the client gets an answer; the handler's late reply is dropped by Fastify.
    const timer = setTimeout(() => {
      if (!reply.sent) sendProblem(reply, problem.timeout());
    }, opts.requestTimeoutMs);
    timer.unref();
    reply.raw.once('close', () => clearTimeout(timer));
    done();
  });

  app.addHook('onResponse', (req, reply, done) => {
    const route = req.routeOptions.url ?? 'unmatched';
    opts.metrics.httpRequests.inc({ route, status: `${Math.floor(reply.statusCode / 100)}xx` });
    opts.metrics.httpDuration.observe({ route }, reply.elapsedTime / 1000);
    if (tracing) {
      const realm = loggableRealm(req);
      tracing.describeRequest(req.raw, route, realm ? { 'proudauth.realm': realm } : {});
    }
    logRequest(opts.log, req, reply, route, tracing?.traceIdOf(req.raw));
    done();
  });

  return app;
}

/**
 * The route handler inside a span of its own: the use case the route runs, a child of the request's
 * server span, carrying the route pattern and the realm (never a parameter of another kind).
 */
function tracedHandler(t: Tracer, name: string, handler: RouteHandlerMethod): RouteHandlerMethod {
  return function traced(this: FastifyInstance, req, reply) {
    const realm = loggableRealm(req);
    const route = req.routeOptions.url ?? 'unmatched';
    return t.span(
      `handle ${name}`,
      'internal',
      { 'http.route': route, ...(realm ? { 'proudauth.realm': realm } : {}) },
      async () => handler.call(this, req, reply),
    );
  };
}
