// Prometheus metrics (spec doc 2, Metrics). Labels never carry user ids, emails or realm names, and
// each family is capped at the spec's number of label combinations: past the cap, new combinations
// are counted under the value "overflow" instead of growing the series without bound. The standard
// process and Node.js runtime families (process_*, nodejs_*) are exposed beside them.
import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { renderFromPrimary } from './metrics-cluster.ts';

/** spec doc 2, Limits: label combinations per counter and per histogram. */
export const COUNTER_CAP = 1000;
export const HISTOGRAM_CAP = 500;
export const OVERFLOW = 'overflow';

class LabelCap {
  private readonly seen = new Set<string>();
  private readonly cap: number;
  constructor(cap: number) {
    this.cap = cap;
  }

  admit<L extends Record<string, string>>(labels: L): L {
    // A family's label names are fixed, so the values alone tell combinations apart.
    let key = '';
    for (const name in labels) key += `${labels[name]}\u0000`;
    if (this.seen.has(key)) return labels;
    if (this.seen.size < this.cap) {
      this.seen.add(key);
      return labels;
    }
    const capped = Object.fromEntries(Object.keys(labels).map((k) => [k, OVERFLOW])) as L;
    this.seen.add(
      Object.values(capped)
        .map((v) => `${v}\u0000`)
        .join(''),
    );
    return capped;
  }
}

export class CappedCounter<N extends string> {
  private readonly cap = new LabelCap(COUNTER_CAP);
  private readonly counter: Counter<N>;
  constructor(counter: Counter<N>) {
    this.counter = counter;
  }
  inc(labels: Record<N, string>, value = 1): void {
    this.counter.inc(this.cap.admit(labels), value);
  }
}

export class CappedHistogram<N extends string> {
  private readonly cap = new LabelCap(HISTOGRAM_CAP);
  private readonly histogram: Histogram<N>;
  constructor(histogram: Histogram<N>) {
    this.histogram = histogram;
  }
  observe(labels: Record<N, string>, seconds: number): void {
    this.histogram.observe(this.cap.admit(labels), seconds);
  }
}

export type GaugeCollector = () => Promise<number | null>;

/**
 * The process and runtime families describe the process, not one Metrics instance: one registry
 * per process, created on first use, so several apps in one process (tests) neither register them
 * twice nor each start their own event-loop monitor and GC observer.
 */
let runtimeRegistry: Registry | null = null;
export function runtimeMetrics(): Registry {
  if (!runtimeRegistry) {
    runtimeRegistry = new Registry();
    collectDefaultMetrics({ register: runtimeRegistry });
  }
  return runtimeRegistry;
}

export class Metrics {
  readonly registry = new Registry();
  readonly httpRequests: CappedCounter<'route' | 'status'>;
  readonly httpDuration: CappedHistogram<'route'>;
  readonly loadShed: CappedCounter<'pool'>;
  readonly signingFailures: CappedCounter<'reason'>;
  readonly securitySignals: CappedCounter<'signal'>;
  readonly authentications: CappedCounter<'outcome'>;
  readonly tokens: CappedCounter<'grant_type' | 'outcome'>;
  readonly rateLimited: CappedCounter<'surface'>;
  /** Outbound deliveries by channel (webhook, notification, backchannel_logout) and outcome; worker only. */
  readonly deliveries: CappedCounter<'channel' | 'outcome'>;
  /** Calls to realm hooks by kind and outcome (docs/hooks.md: both bounded enumerations). */
  readonly hookCalls: CappedCounter<'kind' | 'outcome'>;
  /** SCIM requests (docs/scim.md) by resource type, method and outcome: bounded enumerations. */
  readonly directoryScimRequests: CappedCounter<'resource' | 'method' | 'outcome'>;

  private readonly runtime = runtimeMetrics();

  constructor() {
    const registers = [this.registry];
    this.httpRequests = new CappedCounter(
      new Counter({
        name: 'service_http_requests_total',
        help: 'HTTP requests by route pattern and status class',
        labelNames: ['route', 'status'],
        registers,
      }),
    );
    this.httpDuration = new CappedHistogram(
      new Histogram({
        name: 'service_http_request_duration_seconds',
        help: 'HTTP request duration by route pattern',
        labelNames: ['route'],
        buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
        registers,
      }),
    );
    this.loadShed = new CappedCounter(
      new Counter({
        name: 'service_load_shed_total',
        help: 'Requests refused because the in-flight limit was reached, by pool',
        labelNames: ['pool'],
        registers,
      }),
    );
    this.signingFailures = new CappedCounter(
      new Counter({
        name: 'service_signing_failures_total',
        help: 'Token signing failures by reason',
        labelNames: ['reason'],
        registers,
      }),
    );
    this.rateLimited = new CappedCounter(
      new Counter({
        name: 'service_rate_limited_total',
        help: 'Requests refused because an abuse budget was spent, by surface (signin, token, introspect, revoke, registration)',
        labelNames: ['surface'],
        registers,
      }),
    );
    this.authentications = new CappedCounter(
      new Counter({
        name: 'service_authentications_total',
        help: 'Sign-in proofs by outcome: completed sign-ins and failed proofs',
        labelNames: ['outcome'],
        registers,
      }),
    );
    this.tokens = new CappedCounter(
      new Counter({
        name: 'service_tokens_total',
        help: 'Token endpoint requests by grant type and outcome',
        labelNames: ['grant_type', 'outcome'],
        registers,
      }),
    );
    this.deliveries = new CappedCounter(
      new Counter({
        name: 'service_delivery_total',
        help: 'Outbound delivery attempts by channel and outcome',
        labelNames: ['channel', 'outcome'],
        registers,
      }),
    );
    this.directoryScimRequests = this.counter(
      'service_directory_scim_requests_total',
      'SCIM requests by resource type, method and outcome',
      ['resource', 'method', 'outcome'],
    );
    this.hookCalls = this.counter('service_hook_calls_total', 'Calls to realm hooks by kind and outcome', [
      'kind',
      'outcome',
    ]);
    this.securitySignals = new CappedCounter(
      new Counter({
        name: 'service_security_signals_total',
        help: 'Audit events that carried an alertable security signal',
        labelNames: ['signal'],
        registers,
      }),
    );
  }

  /** A counter of this registry, capped at the spec's number of label combinations. */
  counter<N extends string>(name: string, help: string, labelNames: readonly N[]): CappedCounter<N> {
    return new CappedCounter(new Counter<N>({ name, help, labelNames, registers: [this.registry] }));
  }

  /**
   * A gauge refreshed on every scrape. A collector answering null or failing leaves the gauge without
   * a sample (reset() alone would publish 0 for a gauge without labels), and never fails the scrape.
   */
  gauge(
    name: string,
    help: string,
    collect: GaugeCollector,
    // Across the processes of one `proudauth serve` each process probes the same database: one value, not a sum.
    aggregator: 'max' | 'min' = 'max',
  ): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      aggregator,
      async collect() {
        let v: number | null;
        try {
          v = await collect();
        } catch {
          v = null;
        }
        if (v === null) this.remove({});
        else this.set(v);
      },
    });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  private aggregated = false;

  /**
   * One of several `proudauth serve` processes (node:cluster): a scrape of any process answers for
   * all of them, counters and histograms summed, gauges as their aggregator says (docs/scaling.md).
   */
  aggregateAcrossProcesses(): void {
    this.aggregated = true;
    AggregatorRegistry.setRegistries([this.registry, this.runtime]);
    // Constructing one is what makes prom-client answer the primary's requests in a worker.
    new AggregatorRegistry();
  }

  render(): Promise<string> {
    if (this.aggregated) return renderFromPrimary();
    return Registry.merge([this.registry, this.runtime]).metrics();
  }
}
