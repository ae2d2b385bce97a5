// Turns tracing on for a process when observability.tracing.enabled says so (docs/deployment.md,
// Tracing). Only then are the OpenTelemetry packages imported: with tracing off this module's one
// check is all it costs.
import type { Config } from '../platform/config/settings.ts';
import type { Logger } from '../platform/log.ts';
import { EgressGuard } from '../platform/net/egress-guard.ts';
import type { OutboundHttp } from '../platform/net/outbound-http.ts';
import { installTracer, tracer } from '../platform/tracing.ts';
import { throttledWarning } from './throttled-warning.ts';

export async function startTracing(config: Config, outbound: OutboundHttp, log: Logger): Promise<void> {
  const t = config.observability.tracing;
  if (!t.enabled || t.endpoint === null || tracer() !== null) return;
  const { createOtelTracer } = await import('../platform/tracing-otel.ts');
  const warn = throttledWarning(log, 'trace export failed; spans are dropped until the collector answers');
  installTracer(
    createOtelTracer({
      endpoint: t.endpoint,
      samplingRatio: t.samplingRatio,
      serviceName: t.serviceName,
      outbound,
      // The collector is reached under the egress rules webhooks follow (delivery.egress_allowlist).
      guard: new EgressGuard({
        allowlist: config.delivery.egressAllowlist,
        allowPrivate: config.delivery.allowPrivateWebhooks,
      }),
      onExportFailure: (reason) => warn({ reason }),
    }),
  );
}

/** Exports what is buffered; a process calls it as it stops. */
export async function stopTracing(): Promise<void> {
  const t = tracer();
  installTracer(null);
  await t?.shutdown();
}
