// deploy/grafana/proudauth.json: every query of the dashboard (panels and variables) names metric
// families and label names that a live exposition has. The exposition is scraped from a process
// that serves, answered a client_credentials request and ran a worker task, as a Prometheus
// would scrape it; `job` and `instance` are the labels Prometheus adds to every scraped series.
// promtool parses each query (as a recording rule) when it is on PATH.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { TASKS } from '../../../src/main/worker/tasks.ts';
import { startWorker } from '../../../src/main/worker/worker.ts';
import { runtimeMetrics } from '../../../src/platform/metrics.ts';
import { startHarness } from '../../harness/harness.ts';
import { serviceTokenSeed } from '../../harness/token-kit.ts';
import { send } from '../edge/http-client.ts';
import { familyType, parseSamples, type Sample } from './prom-text.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const DASHBOARD = join(ROOT, 'deploy', 'grafana', 'proudauth.json');
const TARGET_LABELS = new Set(['job', 'instance']);
const METRIC = /\b(?:service|process|nodejs)_[a-z0-9_]+\b/g;
const HISTOGRAM_SUFFIX = /_(bucket|sum|count)$/;

interface Panel {
  id: number;
  type: string;
  title: string;
  targets?: { expr: string }[];
  panels?: Panel[];
}
interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; query: string | { query: string } }[] };
}

function queriesOf(d: Dashboard): { where: string; expr: string }[] {
  const out: { where: string; expr: string }[] = [];
  const walk = (ps: Panel[]) => {
    for (const p of ps) {
      for (const t of p.targets ?? []) out.push({ where: `panel "${p.title}"`, expr: t.expr });
      walk(p.panels ?? []);
    }
  };
  walk(d.panels);
  for (const v of d.templating.list) {
    const q = typeof v.query === 'string' ? v.query : v.query.query;
    if (/label_values\(/.test(q)) out.push({ where: `variable $${v.name}`, expr: q });
  }
  return out;
}

/** Label names per sample name in the scrape; families without a sample yet: their declared labels. */
function labelsOf(text: string, samples: Sample[], declared: (family: string) => string[] | null) {
  return (name: string): Set<string> | null => {
    const seen = samples.filter((s) => s.name === name);
    if (seen.length > 0) return new Set(seen.flatMap((s) => Object.keys(s.labels)));
    const family = familyType(text, name) ? name : name.replace(HISTOGRAM_SUFFIX, '');
    if (!familyType(text, family)) return null;
    const labels = declared(family) ?? [];
    return new Set(name.endsWith('_bucket') ? [...labels, 'le'] : labels);
  };
}

/** Label names an expression uses: selector matchers per metric, and grouping labels. */
function labelUses(expr: string): { metric: string | null; label: string }[] {
  const uses: { metric: string | null; label: string }[] = [];
  for (const m of expr.matchAll(/\b([a-z_][a-z0-9_]*)\{([^}]*)\}/g))
    for (const l of (m[2] as string).matchAll(/([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)/g))
      uses.push({ metric: m[1] as string, label: l[1] as string });
  for (const g of expr.matchAll(/\b(?:by|without|on|ignoring)\s*\(([^)]*)\)/g))
    for (const l of (g[1] as string)
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean))
      uses.push({ metric: null, label: l });
  const lv = /label_values\([^,]*,\s*(\w+)\s*\)/.exec(expr);
  if (lv) uses.push({ metric: null, label: lv[1] as string });
  return uses;
}

describe('ops › deploy › Grafana dashboard', () => {
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as Dashboard;
  const queries = queriesOf(dashboard);

  test('case=every query names metrics and labels of a live scrape', async (t) => {
    const h = await startHarness(t);
    const worker = startWorker(h.ctx, { autostart: false });
    t.after(() => worker.stop());
    const seal = TASKS.find((x) => x.name === 'audit.seal');
    assert.ok(seal);
    await worker.scheduler.runOnce(seal);
    const realm = await h.createRealm();
    const { token } = await serviceTokenSeed(h, realm, 'https://orders.example.test');
    assert.equal((await token()).status, 200);
    assert.equal((await send(h.publicUrl, '/health/ready')).status, 200);

    const res = await send(h.internalUrl, '/metrics');
    assert.equal(res.status, 200);
    const samples = parseSamples(res.text);
    // A family without samples yet (the GC histogram before the first collection) is known by the
    // label names it was declared with, in the app's registry or the process's runtime one.
    const registries = [h.ctx.metrics.registry, runtimeMetrics()];
    const labels = labelsOf(res.text, samples, (family) => {
      for (const registry of registries) {
        const m = registry.getSingleMetric(family) as unknown as { labelNames?: string[] } | undefined;
        if (m?.labelNames) return m.labelNames;
      }
      return null;
    });

    assert.ok(queries.length >= 30, `${queries.length} queries`);
    for (const { where, expr } of queries) {
      const metrics = [...new Set(expr.match(METRIC) ?? [])];
      assert.ok(metrics.length > 0, `${where}: no metric in ${expr}`);
      const known = new Map(metrics.map((m) => [m, labels(m)]));
      for (const [m, set] of known) assert.ok(set, `${where}: ${m} is not in the scrape`);
      const union = new Set([...known.values()].flatMap((s) => [...(s ?? [])]));
      for (const { metric, label } of labelUses(expr)) {
        if (TARGET_LABELS.has(label)) continue;
        const own = metric ? known.get(metric) : union;
        assert.ok(own?.has(label), `${where}: label ${label} is not on ${metric ?? metrics.join(', ')}`);
      }
    }
  });

  test('case=the dashboard covers every area an operator watches', () => {
    const used = new Set(queries.flatMap((q) => q.expr.match(METRIC) ?? []));
    for (const family of [
      'service_authentications_total',
      'service_tokens_total',
      'service_http_requests_total',
      'service_http_request_duration_seconds_bucket',
      'service_rate_limited_total',
      'service_load_shed_total',
      'service_outbox_oldest_pending_seconds',
      'service_notification_oldest_due_seconds',
      'service_webhook_oldest_due_seconds',
      'service_jobs_oldest_queued_seconds',
      'service_delivery_total',
      'service_jobs_failed_total',
      'service_audit_unsealed_events',
      'service_audit_unsealed_oldest_seconds',
      'service_audit_integrity_problems',
      'service_database_up',
      'service_clock_skew_milliseconds',
      'service_signing_failures_total',
      'service_worker_runs_total',
      'service_worker_active_leases',
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
    ])
      assert.ok(used.has(family), `no panel reads ${family}`);
    const ids = dashboard.panels.map((p) => p.id);
    assert.equal(new Set(ids).size, ids.length, 'panel ids are unique');
    assert.equal(dashboard.uid, 'proudauth-overview');
  });

  const probe = spawnSync('promtool', ['--version'], { stdio: 'ignore' });
  test('case=promtool parses every panel query', {
    skip: probe.error ? 'promtool is not on PATH (apt-get install prometheus)' : false,
  }, (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'proudauth-dashboard-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    // Grafana's variables replaced by what they stand for at query time.
    const concrete = (e: string) =>
      e
        .replaceAll('$__rate_interval', '5m')
        .replaceAll('$__range', '6h')
        .replaceAll('$job', '.*')
        .replaceAll('$instance', '.*');
    const rules = queries
      .filter((q) => !q.expr.startsWith('label_values('))
      .map(
        (q, i) => `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(concrete(q.expr))}`,
      );
    writeFileSync(
      join(dir, 'queries.yml'),
      `groups:\n  - name: dashboard\n    rules:\n${rules.join('\n')}\n`,
    );
    const r = spawnSync('promtool', ['check', 'rules', 'queries.yml'], { cwd: dir, encoding: 'utf8' });
    assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  });
});
