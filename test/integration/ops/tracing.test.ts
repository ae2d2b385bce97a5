// OpenTelemetry tracing (docs/deployment.md, Tracing): spans of a headless sign-in and a token
// request reach an OTLP/HTTP receiver of the test's own (JSON encoding), with the route pattern
// and the realm and without any user id, email, token or secret; a traceparent is continued only
// from a trusted proxy; the request log line carries the trace id.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, type TestContext, test } from 'node:test';
import { workerRun } from '../../../src/kernel/call.ts';
import type { Task } from '../../../src/kernel/task.ts';
import { stopTracing } from '../../../src/main/tracing-start.ts';
import { Scheduler } from '../../../src/main/worker/scheduler.ts';
import { createLogger } from '../../../src/platform/log.ts';
import { tracer } from '../../../src/platform/tracing.ts';
import { startHarness } from '../../harness/harness.ts';
import { passwordSignIn, REDIRECT } from '../../harness/signin-kit.ts';
import { serviceTokenSeed } from '../../harness/token-kit.ts';

const AUDIENCE = 'https://orders.example.com';

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  boolValue?: boolean;
  doubleValue?: number;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: OtlpValue }[];
}
interface Span {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, string>;
}

const spans: Span[] = [];
const contentTypes = new Set<string>();
const receiver = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    contentTypes.add(String(req.headers['content-type']));
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      resourceSpans: { scopeSpans: { spans: OtlpSpan[] }[] }[];
    };
    for (const rs of body.resourceSpans)
      for (const ss of rs.scopeSpans)
        for (const s of ss.spans) {
          const attributes: Record<string, string> = {};
          for (const a of s.attributes ?? []) {
            const v = a.value;
            attributes[a.key] = String(v.stringValue ?? v.intValue ?? v.boolValue ?? v.doubleValue);
          }
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId ?? '',
            name: s.name,
            attributes,
          });
        }
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
let endpoint = '';

before(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;
});
after(async () => {
  await stopTracing();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

async function setup(t: TestContext, trusted: boolean) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  const h = await startHarness(t, {
    log: createLogger('info', sink),
    overrides: {
      'observability.tracing.enabled': true,
      'observability.tracing.endpoint': endpoint,
      'observability.tracing.sampling_ratio': 1,
      // The collector is reached under the egress rules: the test's is on the loopback.
      'delivery.egress_allowlist': '127.0.0.1/32',
      ...(trusted ? { 'server.trusted_proxies': '127.0.0.1/32,::1' } : {}),
    },
  });
  return { h, lines };
}

/** Exports until a server span of `route` in a new trace has arrived (its end follows the answer). */
async function serverSpan(route: string, seen: Set<string>): Promise<Span> {
  for (let i = 0; i < 200; i++) {
    await tracer()?.flush();
    const found = spans.find(
      (s) => s.attributes['http.route'] === route && !seen.has(s.spanId) && s.name.startsWith('POST '),
    );
    if (found) {
      seen.add(found.spanId);
      return found;
    }
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`no server span of ${route}`);
}

const childrenOf = (span: Span) => spans.filter((s) => s.parentSpanId === span.spanId);
const inTrace = (span: Span) => spans.filter((s) => s.traceId === span.traceId);

describe('ops › tracing', () => {
  test('case=a sign-in and a token request are traced without personal data or secrets', async (t) => {
    const { h, lines } = await setup(t, false);
    assert.ok(tracer(), 'tracing is on');
    const realm = await h.createRealm();
    await h.createClient(realm, {
      clientId: 'web-app',
      name: 'Web App',
      type: 'web',
      redirectUris: [REDIRECT],
    });
    const email = 'marker-9c4e1b@example.com';
    const password = 'marker-pass-5d27a8';
    const user = await h.createUser(realm, { email, password });
    const { state } = await passwordSignIn(h, realm.name, 'web-app', email, password);
    assert.equal(state.status, 200);
    const { svc, token: askToken } = await serviceTokenSeed(h, realm, AUDIENCE, 'marker-svc');
    const tokenRes = await askToken();
    assert.equal(tokenRes.status, 200, JSON.stringify(tokenRes.body));
    const accessToken = String((tokenRes.body as { access_token: string }).access_token);

    const seen = new Set<string>();
    const signin = await serverSpan('/api/v1/realms/:realm/auth/transactions/:id/password', seen);
    const token = await serverSpan('/realms/:realm/oauth/token', seen);
    assert.deepEqual(contentTypes, new Set(['application/json']));

    for (const server of [signin, token]) {
      assert.equal(server.attributes['proudauth.realm'], realm.name);
      assert.equal(server.attributes['http.request.method'], 'POST');
      assert.equal(server.attributes['http.response.status_code'], '200');
      assert.equal(server.parentSpanId, '', 'a request from an untrusted peer starts a trace');
      // The route handler is a child of the server span; hooks before it (a realm lookup) may add
      // database spans beside it.
      const children = childrenOf(server);
      const handlers = children.filter((s) => s.name.startsWith('handle '));
      assert.equal(handlers.length, 1, 'one route handler span per request');
      for (const c of children) assert.ok(c.name.startsWith('handle ') || c.name.startsWith('db '), c.name);
      const handler = handlers[0];
      assert.equal(handler?.name, `handle POST ${server.attributes['http.route']}`);
      assert.equal(handler?.attributes['proudauth.realm'], realm.name);
      const db = inTrace(server).filter((s) => s.name.startsWith('db '));
      assert.ok(db.length > 0, 'database statements are spans of the request');
      for (const s of db) assert.ok(['postgresql', 'pglite'].includes(s.attributes['db.system.name'] ?? ''));
      // The request log line names the trace.
      const line = lines.find((l) => l.msg === 'request' && l.trace_id === server.traceId);
      assert.equal(line?.route, server.attributes['http.route']);
    }

    // Nothing a person or a credential could be recognized by, in any span name or attribute.
    const markers = [
      email,
      'marker-9c4e1b',
      password,
      user.id,
      svc.creds.secret,
      accessToken,
      svc.principalId,
    ];
    const exported = JSON.stringify(spans.map((s) => [s.name, s.attributes]));
    for (const m of markers) assert.ok(!exported.includes(m), `a span carries ${m.slice(0, 12)}…`);
  });

  test('case=a traceparent is continued from a trusted proxy only', async (t) => {
    const trustedSide = await setup(t, true);
    const untrustedSide = await setup(t, false);
    const seen = new Set<string>(spans.map((s) => s.spanId));
    const parentTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentSpan = '00f067aa0ba902b7';
    const traceparent = `00-${parentTrace}-${parentSpan}-01`;
    for (const { h } of [trustedSide, untrustedSide]) {
      const realm = await h.createRealm();
      const { svc } = await serviceTokenSeed(h, realm, AUDIENCE, 'svc');
      const r = await h.get(`/realms/${realm.name}/oauth/token`, {
        method: 'POST',
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          authorization: `Basic ${Buffer.from(`svc:${svc.creds.secret}`).toString('base64')}`,
          traceparent,
        },
        body: `grant_type=client_credentials&resource=${encodeURIComponent(AUDIENCE)}`,
      });
      assert.equal(r.status, 200);
    }
    const a = await serverSpan('/realms/:realm/oauth/token', seen);
    const b = await serverSpan('/realms/:realm/oauth/token', seen);
    const [fromTrusted, fromOther] = a.traceId === parentTrace ? [a, b] : [b, a];
    assert.equal(fromTrusted.traceId, parentTrace, "the trusted proxy's trace goes on");
    assert.equal(fromTrusted.parentSpanId, parentSpan);
    assert.notEqual(fromOther.traceId, parentTrace, "another peer's traceparent is ignored");
    assert.equal(fromOther.parentSpanId, '');
  });

  test('case=a worker task run is a root span with its run id, its statements its children', async (t) => {
    const { h } = await setup(t, false);
    let runId: string | undefined;
    const task: Task<unknown> = {
      name: 'tracing-probe',
      intervalMs: 60_000,
      lease: false,
      async run() {
        runId = workerRun.getStore()?.runId;
        await h.ctx.db.query('select 1');
        return { ran: 1 };
      },
    };
    const scheduler = new Scheduler(h.ctx.db, {}, [task], () => h.ctx.clock.now(), h.ctx.log, {
      onRun: () => {},
    });
    assert.deepEqual(await scheduler.runOnce(task), { ran: 1 });
    assert.ok(runId);
    let root: Span | undefined;
    for (let i = 0; i < 200 && !root; i++) {
      await tracer()?.flush();
      root = spans.find((s) => s.name === 'task tracing-probe');
      if (!root) await new Promise((r) => setImmediate(r));
    }
    assert.ok(root, 'the task run was exported');
    assert.equal(root.parentSpanId, '');
    assert.equal(root.attributes['proudauth.run_id'], runId);
    assert.ok(childrenOf(root).some((s) => s.name === 'db select'));
  });

  test('case=OpenTelemetry is imported by the tracing module alone, and that one only dynamically', () => {
    const src = join(import.meta.dirname, '..', '..', '..', 'src');
    const files = readdirSync(src, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const importers = files.filter((f) => /from '@opentelemetry\//.test(readFileSync(join(src, f), 'utf8')));
    assert.deepEqual(importers, [join('platform', 'tracing-otel.ts')]);
    const staticImporters = files.filter((f) =>
      /from '[./]+(?:platform\/)?tracing-otel\.ts'/.test(readFileSync(join(src, f), 'utf8')),
    );
    assert.deepEqual(staticImporters, [], 'tracing-otel.ts is reached by a dynamic import only');
  });
});
