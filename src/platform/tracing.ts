// The tracing seam (docs/deployment.md, Tracing). Code that opens spans (the HTTP edge, the
// database port, outbound HTTP, the worker) talks to this module only; it imports nothing of
// OpenTelemetry. With observability.tracing.enabled false nothing is installed, every helper
// below is one null check, and the OpenTelemetry packages are never loaded (tracing-otel.ts is
// imported dynamically by the process that turns tracing on).
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Span attribute values: names, patterns, counts. Never a user id, email, token or secret. */
export type SpanAttributes = Record<string, string | number | boolean>;

export interface Tracer {
  /**
   * Serves one request inside a server span. `acceptParent` says whether the request's W3C
   * traceparent may be continued (the peer is a trusted proxy); otherwise a new trace starts.
   */
  serve(req: IncomingMessage, res: ServerResponse, acceptParent: boolean, serve: () => void): void;
  /** Names the request's server span after its route and adds attributes, once routed. */
  describeRequest(req: IncomingMessage, route: string, attributes: SpanAttributes): void;
  /** The trace id of the request's span, when it has one. */
  traceIdOf(req: IncomingMessage): string | undefined;
  /** Runs fn inside a child span of whatever span is current. */
  span<T>(
    name: string,
    kind: 'internal' | 'client',
    attributes: SpanAttributes,
    fn: () => Promise<T>,
  ): Promise<T>;
  /** Runs fn as the root span of background work (a worker task run, a job). */
  root<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T>;
  /** Exports the spans ended so far. */
  flush(): Promise<void>;
  /** Exports what is buffered and stops. */
  shutdown(): Promise<void>;
}

let current: Tracer | null = null;

/** The installed tracer; null when tracing is off. */
export const tracer = (): Tracer | null => current;

/** Installs (or, with null, removes) the process's tracer. */
export function installTracer(t: Tracer | null): void {
  current = t;
}

/** fn inside a child span when tracing is on; fn itself otherwise. */
export function inSpan<T>(
  name: string,
  kind: 'internal' | 'client',
  attributes: SpanAttributes,
  fn: () => Promise<T>,
): Promise<T> {
  return current === null ? fn() : current.span(name, kind, attributes, fn);
}

/** fn as a root span when tracing is on; fn itself otherwise. */
export function inRootSpan<T>(name: string, attributes: SpanAttributes, fn: () => Promise<T>): Promise<T> {
  return current === null ? fn() : current.root(name, attributes, fn);
}
