// The OpenTelemetry side of the tracing seam (tracing.ts), loaded only by `startTracing` when
// observability.tracing.enabled is true. Spans are ours (a server span per request, a span per
// route handler, database, outbound HTTP and worker spans), not monkey-patching instrumentations:
// under ESM those must hook the module loader before anything is imported, which a setting read
// at start-up cannot do. Export is OTLP/HTTP with JSON bodies, posted through OutboundHttp with
// the operator's egress rules (docs/deployment.md, Tracing).
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  type Context,
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { type ExportResult, ExportResultCode, suppressTracing } from '@opentelemetry/core';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  type ReadableSpan,
  type SpanExporter,
  TraceIdRatioBasedSampler,
} from '@opentelemetry/sdk-trace-node';
import type { EgressGuard } from './net/egress-guard.ts';
import type { OutboundHttp } from './net/outbound-http.ts';
import type { SpanAttributes, Tracer } from './tracing.ts';

export interface OtelOptions {
  endpoint: string;
  samplingRatio: number;
  serviceName: string;
  outbound: OutboundHttp;
  guard: EgressGuard;
  /** Told once per failed export (the collector is down, the egress rules refuse it). */
  onExportFailure: (reason: string) => void;
  /** Tests export each span as it ends instead of in batches. */
  batchDelayMs?: number;
}

/** Posts OTLP/HTTP JSON through OutboundHttp; its own request is never traced. */
class OutboundOtlpExporter implements SpanExporter {
  readonly #o: OtelOptions;
  readonly #pending = new Set<Promise<void>>();
  constructor(o: OtelOptions) {
    this.#o = o;
  }

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    const body = JsonTraceSerializer.serializeRequest(spans);
    if (!body) {
      done({ code: ExportResultCode.FAILED });
      return;
    }
    const sent = context
      .with(suppressTracing(context.active()), () =>
        this.#o.outbound.post({
          url: this.#o.endpoint,
          headers: { 'content-type': 'application/json' },
          body: Buffer.from(body).toString('utf8'),
          guard: this.#o.guard,
          timeoutMs: 10_000,
          maxResponseBytes: 64 * 1024,
        }),
      )
      .then((r) => {
        const ok = r.kind === 'response' && r.status >= 200 && r.status < 300;
        if (!ok) this.#o.onExportFailure(r.kind === 'response' ? `status ${r.status}` : r.kind);
        done({ code: ok ? ExportResultCode.SUCCESS : ExportResultCode.FAILED });
      });
    this.#pending.add(sent);
    void sent.finally(() => this.#pending.delete(sent));
  }

  async forceFlush(): Promise<void> {
    await Promise.all([...this.#pending]);
  }

  shutdown(): Promise<void> {
    return this.forceFlush();
  }
}

/** An error's kind for a span status: its name or code, never its message (it may quote input). */
const errorKind = (err: unknown): string => {
  const e = err as { code?: unknown; name?: unknown } | null;
  if (e && typeof e.code === 'string' && /^[A-Za-z0-9_.-]{1,64}$/.test(e.code)) return e.code;
  return e && typeof e.name === 'string' ? e.name : 'error';
};

export function createOtelTracer(o: OtelOptions): Tracer {
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': o.serviceName }),
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(o.samplingRatio) }),
    spanProcessors: [
      new BatchSpanProcessor(new OutboundOtlpExporter(o), { scheduledDelayMillis: o.batchDelayMs ?? 5000 }),
    ],
  });
  // The AsyncLocalStorage context manager and the W3C trace-context propagator.
  provider.register();
  const tracer = provider.getTracer('proudauth');
  const requestSpans = new WeakMap<IncomingMessage, Span>();

  const inside = async <T>(span: Span, fn: () => Promise<T>): Promise<T> => {
    try {
      return await fn();
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorKind(err) });
      throw err;
    } finally {
      span.end();
    }
  };
  const start = <T>(
    name: string,
    kind: SpanKind,
    attributes: SpanAttributes,
    parent: Context,
    fn: () => Promise<T>,
  ) => {
    const span = tracer.startSpan(name, { kind, attributes }, parent);
    return context.with(trace.setSpan(parent, span), () => inside(span, fn));
  };

  return {
    serve(req, res, acceptParent, serve) {
      const parent = acceptParent ? propagation.extract(ROOT_CONTEXT, req.headers) : ROOT_CONTEXT;
      const method = req.method ?? 'GET';
      const span = tracer.startSpan(
        method,
        { kind: SpanKind.SERVER, attributes: { 'http.request.method': method } },
        parent,
      );
      requestSpans.set(req, span);
      const ctx = trace.setSpan(parent, span);
      context.bind(ctx, req);
      context.bind(ctx, res as ServerResponse);
      res.once('close', () => {
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
      context.with(ctx, serve);
    },
    describeRequest(req, route, attributes) {
      const span = requestSpans.get(req);
      if (!span) return;
      span.updateName(`${req.method ?? 'GET'} ${route}`);
      span.setAttributes({ 'http.route': route, ...attributes });
    },
    traceIdOf(req) {
      const span = requestSpans.get(req);
      return span ? span.spanContext().traceId : undefined;
    },
    span: (name, kind, attributes, fn) =>
      start(name, kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL, attributes, context.active(), fn),
    root: (name, attributes, fn) => start(name, SpanKind.INTERNAL, attributes, ROOT_CONTEXT, fn),
    async flush() {
      await provider.forceFlush();
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}
