// Every metric of spec doc 2, Metrics, with its type and exactly its label names, in the real
// exposition of a process that serves and runs the worker (as `proudauth dev` does); the worker-only
// families come from the worker. promtool checks that same exposition.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { TASKS } from '../../../src/main/worker/tasks.ts';
import { startWorker } from '../../../src/main/worker/worker.ts';
import { startHarness } from '../../harness/harness.ts';
import { send } from '../edge/http-client.ts';
import { duplicateSeries, familyType, parseSamples } from './prom-text.ts';

// Name, type, label names (histograms: besides `le`). The spec's "status class" label is `status`
// (docs/decisions.md).
const TABLE: readonly [string, 'counter' | 'gauge' | 'histogram', readonly string[]][] = [
  ['service_http_requests_total', 'counter', ['route', 'status']],
  ['service_http_request_duration_seconds', 'histogram', ['route']],
  ['service_authentications_total', 'counter', ['outcome']],
  ['service_tokens_total', 'counter', ['grant_type', 'outcome']],
  ['service_rate_limited_total', 'counter', ['surface']],
  ['service_load_shed_total', 'counter', ['pool']],
  ['service_database_up', 'gauge', []],
  ['service_outbox_oldest_pending_seconds', 'gauge', []],
  ['service_notification_oldest_due_seconds', 'gauge', []],
  ['service_webhook_oldest_due_seconds', 'gauge', []],
  ['service_jobs_oldest_queued_seconds', 'gauge', []],
  ['service_clock_skew_milliseconds', 'gauge', []],
  ['service_worker_active_leases', 'gauge', []],
  ['service_audit_unsealed_events', 'gauge', []],
  ['service_audit_unsealed_oldest_seconds', 'gauge', []],
  ['service_security_signals_total', 'counter', ['signal']],
  ['service_signing_failures_total', 'counter', ['reason']],
  ['service_hook_calls_total', 'counter', ['kind', 'outcome']],
  ['service_worker_runs_total', 'counter', ['task', 'outcome']],
  ['service_security_events_total', 'counter', ['type']],
  ['service_delivery_total', 'counter', ['channel', 'outcome']],
  ['service_audit_integrity_problems', 'gauge', []],
  ['service_jobs_failed_total', 'counter', ['type']],
  ['service_outbound_provisioning_operations_total', 'counter', ['resource', 'operation', 'outcome']],
  ['service_outbound_provisioning_failing_targets', 'gauge', []],
  ['service_directory_sync_objects_total', 'counter', ['resource', 'outcome']],
];

// Lint findings promtool may report: the spec names the millisecond gauge, and prom-client's
// standard runtime gauges carry the names Node.js dashboards expect.
const ALLOWED_LINT = [
  /^service_clock_skew_milliseconds use base unit "seconds" instead of "milliseconds"$/,
  /^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/,
];

describe('ops › metrics › the spec table', () => {
  test('case=every metric of the table is exposed with its type and label names', async (t) => {
    const h = await startHarness(t);
    const worker = startWorker(h.ctx, { autostart: false });
    t.after(() => worker.stop());
    // One run of a task, so the worker families have samples of their own.
    const seal = TASKS.find((x) => x.name === 'audit.seal');
    assert.ok(seal);
    await worker.scheduler.runOnce(seal);
    assert.equal((await send(h.publicUrl, '/health/ready')).status, 200);

    const res = await send(h.internalUrl, '/metrics');
    assert.equal(res.status, 200);
    const text = res.text;
    const samples = parseSamples(text);
    for (const [name, type, labels] of TABLE) {
      assert.equal(familyType(text, name), type, `${name} is a ${type}`);
      const declared = (h.ctx.metrics.registry.getSingleMetric(name) as unknown as { labelNames: string[] })
        .labelNames;
      assert.deepEqual([...declared].sort(), [...labels].sort(), `${name} labels`);
      for (const s of samples.filter((x) => x.name === name || x.name.startsWith(`${name}_`))) {
        const keys = Object.keys(s.labels).filter((k) => k !== 'le');
        assert.deepEqual(keys.sort(), [...labels].sort(), `${s.series} carries exactly its labels`);
      }
    }
    // Samples that exist after one request and one worker tick.
    assert.ok(samples.some((s) => s.name === 'service_http_requests_total'));
    assert.ok(samples.some((s) => s.name === 'service_worker_runs_total' && s.labels.task === 'audit.seal'));
    assert.ok(samples.some((s) => s.name === 'service_worker_active_leases'));
    assert.deepEqual(duplicateSeries(text), []);

    const probe = spawnSync('promtool', ['--version'], { stdio: 'ignore' });
    await t.test(
      'promtool check metrics accepts this exposition',
      { skip: probe.error ? 'promtool is not on PATH (apt-get install prometheus)' : false },
      () => {
        const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
        const findings = `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.trim() !== '');
        const unexpected = findings.filter((l) => !ALLOWED_LINT.some((re) => re.test(l)));
        // Exit 3 means lint findings only; a parse error is 1.
        assert.ok(r.status === 0 || (r.status === 3 && unexpected.length === 0), findings.join('\n'));
      },
    );
  });
});
