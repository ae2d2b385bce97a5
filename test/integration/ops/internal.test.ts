// The internal listener (spec doc 2, Health, status and metrics; Metrics; Errors): liveness,
// Prometheus text, the operator status object, and the server.metrics_token guard.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { type Answer, assertJson, assertProblem, send } from '../edge/http-client.ts';
import { duplicateSeries, familyType, parseSamples, repeatedFamilies, sampleValue } from './prom-text.ts';
import { contextOver, listen, refusedDatabase, silentDatabase, skewedClock } from './servers.ts';

const PROM_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
const TOKEN = 'metrics-token-0123456789abcdef';
const SPEC_NAMED_LINT = /^service_clock_skew_milliseconds use base unit "seconds" instead of "milliseconds"$/;
// prom-client's standard runtime gauges carry these names, which Node.js dashboards expect as they are.
const RUNTIME_NAMED_LINT =
  /^nodejs_active_(handles|requests|resources)_total non-counter metrics should not have "_total" suffix$/;

const scrape = async (url: string, headers: Record<string, string> = {}): Promise<Answer> =>
  send(url, '/metrics', { headers });

async function metricsText(h: Harness): Promise<string> {
  const res = await scrape(h.internalUrl);
  assert.equal(res.status, 200, res.text.slice(0, 300));
  return res.text;
}

function promtool(): string | null {
  const r = spawnSync('promtool', ['--version'], { stdio: 'ignore' });
  return r.error ? null : 'promtool';
}

describe('ops › internal listener › liveness and metrics', () => {
  test('case=liveness answers 200 with an empty body', async (t) => {
    const h = await startHarness(t);
    const res = await send(h.internalUrl, '/health/live');
    assert.equal(res.status, 200);
    assert.equal(res.text, '');
  });

  test('case=metrics are Prometheus text 0.0.4 with the request counters and database gauges', async (t) => {
    const h = await startHarness(t);
    assert.equal((await send(h.publicUrl, '/health/live')).status, 200);
    assert.equal((await send(h.publicUrl, '/health/live')).status, 200);

    const res = await scrape(h.internalUrl);
    assert.equal(res.status, 200);
    assert.equal(res.headers['content-type'], PROM_CONTENT_TYPE);
    assert.equal(res.headers['cache-control'], 'no-store');
    const text = res.text;

    assert.match(text, /^service_http_requests_total\{route="\/health\/live",status="2xx"\} 2$/m);
    assert.equal(familyType(text, 'service_http_requests_total'), 'counter');
    assert.equal(familyType(text, 'service_http_request_duration_seconds'), 'histogram');
    assert.equal(
      sampleValue(text, 'service_http_request_duration_seconds_count', { route: '/health/live' }),
      2,
    );
    assert.equal(
      sampleValue(text, 'service_http_request_duration_seconds_bucket', {
        route: '/health/live',
        le: '0.005',
      }) !== undefined,
      true,
      'the histogram starts at 5 ms',
    );
    assert.equal(
      sampleValue(text, 'service_http_request_duration_seconds_bucket', { route: '/health/live', le: '10' }),
      2,
      'the histogram ends at 10 s',
    );
    assert.equal(familyType(text, 'service_load_shed_total'), 'counter');

    // The standard process and Node.js runtime families.
    assert.equal(familyType(text, 'process_cpu_seconds_total'), 'counter');
    assert.ok((sampleValue(text, 'process_cpu_seconds_total') ?? 0) > 0);
    assert.equal(familyType(text, 'process_resident_memory_bytes'), 'gauge');
    assert.ok((sampleValue(text, 'process_resident_memory_bytes') ?? 0) > 0);
    assert.equal(familyType(text, 'nodejs_eventloop_lag_seconds'), 'gauge');
    assert.ok((sampleValue(text, 'nodejs_eventloop_lag_seconds') ?? -1) >= 0);

    assert.equal(familyType(text, 'service_database_up'), 'gauge');
    assert.equal(sampleValue(text, 'service_database_up'), 1);
    assert.equal(familyType(text, 'service_clock_skew_milliseconds'), 'gauge');
    const skew = sampleValue(text, 'service_clock_skew_milliseconds');
    assert.equal(typeof skew, 'number');
    assert.ok(Math.abs(skew ?? Number.NaN) < 60_000, `skew ${skew}`);
    assert.equal(familyType(text, 'service_outbox_oldest_pending_seconds'), 'gauge');
    assert.ok((sampleValue(text, 'service_outbox_oldest_pending_seconds') ?? -1) >= 0);
    assert.equal(familyType(text, 'service_jobs_oldest_queued_seconds'), 'gauge');
    assert.equal(sampleValue(text, 'service_jobs_oldest_queued_seconds'), 0);
    assert.equal(familyType(text, 'service_webhook_oldest_due_seconds'), 'gauge');
    assert.equal(sampleValue(text, 'service_webhook_oldest_due_seconds'), 0);
    assert.equal(familyType(text, 'service_delivery_total'), 'counter');

    // promtool does not catch repeated series, so this check is ours.
    assert.deepEqual(duplicateSeries(text), []);
    assert.deepEqual(repeatedFamilies(text), []);
    for (const s of parseSamples(text)) {
      assert.match(
        s.name,
        /^(service|process|nodejs)_/,
        `only service, process and runtime families: ${s.name}`,
      );
      assert.ok(Number.isFinite(s.value) || s.labels.le === '+Inf', `${s.series} has a number`);
    }

    const tool = promtool();
    await t.test(
      'promtool check metrics accepts the exposition',
      { skip: tool ? false : 'promtool is not on PATH; only the promtool check is skipped' },
      () => {
        const r = spawnSync(tool as string, ['check', 'metrics'], { input: text, encoding: 'utf8' });
        // Exit 3 is lint findings only (exit 1 would be a parse error). The findings allowed are
        // the unit of service_clock_skew_milliseconds (the spec names that metric) and the
        // suffix of three standard runtime gauges.
        const findings = `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.trim() !== '');
        const unexpected = findings.filter((l) => !SPEC_NAMED_LINT.test(l) && !RUNTIME_NAMED_LINT.test(l));
        assert.ok(r.status === 0 || (r.status === 3 && unexpected.length === 0), findings.join('\n'));
      },
    );
  });

  test('case=gauges are refreshed on each scrape', async (t) => {
    let offset = 0;
    const h = await startHarness(t, { clock: { now: () => new Date(Date.now() + offset) } });
    const before = sampleValue(await metricsText(h), 'service_clock_skew_milliseconds') ?? Number.NaN;
    assert.ok(Math.abs(before) < 60_000, `skew ${before}`);
    offset = 10 * 60_000;
    const after = sampleValue(await metricsText(h), 'service_clock_skew_milliseconds') ?? Number.NaN;
    assert.ok(after > 9 * 60_000 && after < 11 * 60_000, `skew ${after}`);
  });

  test('case=labels carry route patterns, never realm names or user data', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    assert.equal((await send(h.publicUrl, `/realms/${realm.name}/jwks`)).status, 200);
    assertProblem(await send(h.publicUrl, '/realms/alice@example.test/jwks'), 404, 'not_found');
    assertProblem(
      await send(h.publicUrl, `/realms/${realm.name}/no-such-endpoint/alice@example.test`),
      404,
      'not_found',
    );
    const text = await metricsText(h);
    assert.equal(
      sampleValue(text, 'service_http_requests_total', { route: '/realms/:realm/jwks', status: '2xx' }),
      1,
    );
    assert.equal(
      sampleValue(text, 'service_http_requests_total', { route: '/realms/:realm/jwks', status: '4xx' }),
      1,
    );
    assert.equal(sampleValue(text, 'service_http_requests_total', { route: 'unmatched', status: '4xx' }), 1);
    assert.ok(!text.includes(realm.name), 'the realm name appears nowhere in the metrics');
    assert.doesNotMatch(text, /alice|example\.test/);
  });

  test('case=metrics answer 404 when observability.metrics_enabled is false', async (t) => {
    const h = await startHarness(t, { overrides: { 'observability.metrics_enabled': false } });
    assertProblem(await scrape(h.internalUrl), 404, 'not_found');
    assert.equal((await send(h.internalUrl, '/status')).status, 200, '/status is still served');
    assert.equal((await send(h.internalUrl, '/health/live')).status, 200);
  });
});

describe('ops › internal listener › metrics token', () => {
  const guarded = ['/metrics', '/status'];

  test('case=a literal token: 401 without or with a wrong bearer, 200 with it', async (t) => {
    const h = await startHarness(t, { overrides: { 'server.metrics_token': TOKEN } });
    const wrong: [string, Record<string, string>][] = [
      ['no credentials', {}],
      ['a wrong bearer', { authorization: 'Bearer not-the-token' }],
      ['a prefix of the token', { authorization: `Bearer ${TOKEN.slice(0, -1)}` }],
      ['the token plus a character', { authorization: `Bearer ${TOKEN}x` }],
      ['the token in another scheme', { authorization: `Basic ${TOKEN}` }],
      ['the bare token', { authorization: TOKEN }],
      ['the token in another header', { 'x-metrics-token': TOKEN }],
    ];
    for (const path of guarded) {
      for (const [what, headers] of wrong) {
        const res = await send(h.internalUrl, path, { headers });
        assertProblem(res, 401, 'unauthorized');
        assert.match(String(res.headers['www-authenticate']), /^Bearer/, `${path} with ${what}`);
      }
      const ok = await send(h.internalUrl, path, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(ok.status, 200, `${path} with the token`);
    }
    assert.equal((await send(h.internalUrl, '/health/live')).status, 200, 'liveness needs no token');
  });

  test('case=a token from an env: reference is resolved and required', async (t) => {
    const h = await startHarness(t, {
      overrides: { 'server.metrics_token': 'env:PA_TEST_METRICS_TOKEN' },
      env: { PA_TEST_METRICS_TOKEN: TOKEN },
    });
    for (const path of guarded) {
      assertProblem(await send(h.internalUrl, path), 401, 'unauthorized');
      const ok = await send(h.internalUrl, path, { headers: { authorization: `Bearer ${TOKEN}` } });
      assert.equal(ok.status, 200, path);
    }
  });

  test('case=an unresolvable token reference refuses every bearer', async (t) => {
    const h = await startHarness(t, { overrides: { 'server.metrics_token': 'env:NOT_SET_ANYWHERE' } });
    const attempts: Record<string, string>[] = [
      {},
      { authorization: 'Bearer anything' },
      { authorization: 'Bearer NOT_SET_ANYWHERE' },
      { authorization: 'Bearer env:NOT_SET_ANYWHERE' },
      { authorization: `Bearer ${TOKEN}` },
    ];
    for (const path of guarded) {
      for (const headers of attempts)
        assertProblem(await send(h.internalUrl, path, { headers }), 401, 'unauthorized');
    }
    assert.equal((await send(h.internalUrl, '/health/live')).status, 200, 'liveness is still served');
  });
});

describe('ops › internal listener › status', () => {
  test('case=status reports every capability ok with clock skew and key provider', async (t) => {
    const h = await startHarness(t);
    await h.createRealm();
    const res = await send(h.internalUrl, '/status');
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = assertJson(res, 200) as Record<string, unknown>;
    assert.equal(body.status, 'ok');
    assert.deepEqual(body.capabilities, {
      database: 'ok',
      schema: 'ok',
      signing: 'ok',
      outbox: 'ok',
      webhooks: 'ok',
      jobs: 'ok',
      email_delivery: 'ok',
      audit_sealing: 'ok',
    });
    assert.equal(typeof body.clock_skew_ms, 'number');
    assert.ok(Math.abs(body.clock_skew_ms as number) < 60_000);
    assert.equal(body.key_provider, 'software');
    assert.equal(typeof body.time, 'string');
    assert.ok(Math.abs(Date.parse(body.time as string) - Date.now()) < 60_000, `time ${body.time}`);
    assert.equal(body.schema, undefined, 'a current schema is not reported as behind');
    assert.equal(typeof (body.backlog_oldest_seconds as { outbox: unknown }).outbox, 'number');
    assert.equal((body.backlog_oldest_seconds as { jobs: unknown }).jobs, 0);
    assert.equal((body.backlog_oldest_seconds as { webhooks: unknown }).webhooks, 0);
  });

  test('case=status names the residency only when a region or allowed destinations are configured', async (t) => {
    const plain = await startHarness(t);
    const none = assertJson(await send(plain.internalUrl, '/status'), 200) as Record<string, unknown>;
    assert.equal('residency' in none, false);
    const eu = await startHarness(t, {
      overrides: {
        'privacy.residency.region': 'eu-west',
        'privacy.residency.allowed_destinations': '*.eu.example.com',
      },
    });
    const body = assertJson(await send(eu.internalUrl, '/status'), 200) as Record<string, unknown>;
    assert.deepEqual(body.residency, { region: 'eu-west', destinations_restricted: true });
    const regionOnly = await startHarness(t, { overrides: { 'privacy.residency.region': 'eu-west' } });
    const r = assertJson(await send(regionOnly.internalUrl, '/status'), 200) as Record<string, unknown>;
    assert.deepEqual(r.residency, { region: 'eu-west', destinations_restricted: false });
  });

  test('case=status reports the clock skew of the server clock', async (t) => {
    const h = await startHarness(t, { clock: skewedClock(10 * 60_000) });
    const body = assertJson(await send(h.internalUrl, '/status'), 200) as {
      clock_skew_ms: number;
      time: string;
    };
    assert.ok(
      body.clock_skew_ms > 9 * 60_000 && body.clock_skew_ms < 11 * 60_000,
      `skew ${body.clock_skew_ms}`,
    );
    assert.ok(Date.parse(body.time) - Date.now() > 9 * 60_000, 'time is the server clock');
  });

  test('case=with the database down, status and metrics say so instead of failing', async (t) => {
    const l = await listen(t, await contextOver(refusedDatabase(t)));
    const res = await send(l.internalUrl, '/status', { timeoutMs: 8000 });
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = assertJson(res, 200) as Record<string, unknown>;
    assert.deepEqual(Object.keys(body).sort(), ['capabilities', 'key_provider', 'status', 'time']);
    assert.equal(body.status, 'unavailable');
    assert.deepEqual(body.capabilities, { database: 'unavailable' });
    assert.equal(body.key_provider, 'software');
    assert.ok(!Number.isNaN(Date.parse(body.time as string)));

    const metrics = await send(l.internalUrl, '/metrics', { timeoutMs: 8000 });
    assert.equal(metrics.status, 200);
    assert.equal(sampleValue(metrics.text, 'service_database_up'), 0);
    // No made-up values for what could not be measured.
    assert.equal(sampleValue(metrics.text, 'service_clock_skew_milliseconds'), undefined);
    assert.equal(sampleValue(metrics.text, 'service_outbox_oldest_pending_seconds'), undefined);
    assert.deepEqual(duplicateSeries(metrics.text), []);
  });

  test('case=with a database that never answers, status and metrics still answer', async (t) => {
    const l = await listen(t, await contextOver(await silentDatabase(t)));
    const [status, metrics] = await Promise.all([
      send(l.internalUrl, '/status', { timeoutMs: 8000 }),
      send(l.internalUrl, '/metrics', { timeoutMs: 8000 }),
    ]);
    const body = assertJson(status, 200) as Record<string, unknown>;
    assert.equal(body.status, 'unavailable');
    assert.deepEqual(body.capabilities, { database: 'unavailable' });
    assert.equal(metrics.status, 200);
    assert.equal(sampleValue(metrics.text, 'service_database_up'), 0);
  });
});
