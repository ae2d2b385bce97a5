// What a client sees from the edge itself: problem bodies for unknown paths and unexpected errors,
// X-Request-Id handling, oversized header sections and the request deadline (spec doc 1 Errors;
// doc 2 Limits).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startHarness } from '../../harness/harness.ts';
import { sampleValue } from '../ops/prom-text.ts';
import {
  assertJson,
  assertProblem,
  eventually,
  Latch,
  rawExchange,
  requestHead,
  send,
} from './http-client.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('edge › problem bodies', () => {
  test('case=an unknown path is 404 not_found, counted under the route label unmatched', async (t) => {
    const h = await startHarness(t);
    const res = await send(h.publicUrl, '/no/such/path?x=1');
    const p = assertProblem(res, 404, 'not_found');
    assert.equal(p.title, 'Not Found');
    let metrics = '';
    await eventually('the 404 is counted', async () => {
      metrics = await (await h.internal('/metrics')).text();
      return sampleValue(metrics, 'service_http_requests_total', { route: 'unmatched', status: '4xx' }) === 1;
    });
    assert.doesNotMatch(metrics, /no\/such\/path/);
  });

  test('case=an unexpected error is a bare 500 internal_error that never echoes the message', async (t) => {
    const secret = 'connection string postgres://admin:hunter2@db.internal/prod';
    const h = await startHarness(t, {
      beforeListen: (app) => {
        app.get('/test/boom', async () => {
          throw new Error(secret);
        });
        app.get('/test/boom-type', async () => {
          const o = null as unknown as { x: string };
          return o.x;
        });
        app.get('/test/boom-value', async () => {
          throw { message: secret, stack: secret };
        });
      },
    });
    for (const path of ['/test/boom', '/test/boom-type', '/test/boom-value']) {
      const res = await send(h.publicUrl, path);
      const p = assertProblem(res, 500, 'internal_error');
      assert.deepEqual(Object.keys(p).sort(), ['code', 'detail', 'status', 'title', 'type'], path);
      assert.doesNotMatch(res.text, /hunter2|postgres:|TypeError|null|stack|at /i, path);
      assert.ok(res.headers['x-request-id'], 'the request id is still echoed');
    }
  });

  test('case=an error that carries a client status keeps the status but not the message', async (t) => {
    const h = await startHarness(t, {
      beforeListen: (app) => {
        app.get('/test/teapot', async () => {
          throw Object.assign(new Error('internal detail hunter2'), { statusCode: 418 });
        });
      },
    });
    const res = await send(h.publicUrl, '/test/teapot');
    assertProblem(res, 418, 'invalid_request');
    assert.doesNotMatch(res.text, /hunter2/);
  });
});

describe('edge › X-Request-Id', () => {
  test('case=a valid client id is echoed unchanged', async (t) => {
    const h = await startHarness(t);
    const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(0x20 + i)).join('');
    const valid = ['abc-123', 'x', 'a'.repeat(64), printable.slice(0, 64), printable.slice(31, 95)];
    for (const id of valid) {
      const res = await send(h.publicUrl, '/health/live', { headers: { 'x-request-id': id } });
      assert.equal(res.status, 200);
      // Node trims the optional whitespace around a header value; ids are compared as the server read them.
      assert.equal(res.headers['x-request-id'], id.trim(), JSON.stringify(id));
    }
  });

  test('case=a 65-character id is replaced by a generated one', async (t) => {
    const h = await startHarness(t);
    const res = await send(h.publicUrl, '/health/live', { headers: { 'x-request-id': 'a'.repeat(65) } });
    assert.equal(res.status, 200);
    assert.match(String(res.headers['x-request-id']), UUID);
  });

  test('case=a missing id is generated and echoed, different per request', async (t) => {
    const h = await startHarness(t);
    const a = await send(h.publicUrl, '/health/live');
    const b = await send(h.publicUrl, '/no/such/path');
    assert.match(String(a.headers['x-request-id']), UUID);
    assert.match(String(b.headers['x-request-id']), UUID);
    assert.notEqual(a.headers['x-request-id'], b.headers['x-request-id']);
  });

  // Raw bytes on the wire: clients refuse to send most of these. Node's parser already refuses
  // control characters other than tab with a 400; the rest reach the id check and are replaced.
  const invalid: [string, string | Buffer, 'generated' | 'refused'][] = [
    ['empty', '', 'generated'],
    ['a tab inside', 'abc\tdef', 'generated'],
    ['non-ASCII UTF-8', Buffer.from('caf\u00e9-123'), 'generated'],
    ['a single Latin-1 byte', Buffer.from([0x61, 0xe9, 0x62]), 'generated'],
    ['a control character', 'abc\u0001def', 'refused'],
    ['DEL', 'abc\u007fdef', 'refused'],
  ];
  for (const [label, value, outcome] of invalid) {
    test(`case=an id with ${label} is never echoed (${outcome})`, async (t) => {
      const h = await startHarness(t);
      const head = requestHead('GET', '/health/live', new URL(h.publicUrl).host, [['X-Request-Id', value]]);
      const res = await rawExchange(h.publicUrl, [head]);
      if (outcome === 'refused') {
        assertProblem(res, 400, 'invalid_request');
        assert.equal(res.headers['x-request-id'], undefined);
      } else {
        assert.equal(res.status, 200);
        assert.match(String(res.headers['x-request-id']), UUID);
      }
    });
  }
});

describe('edge › header size', () => {
  test('case=a header section over limits.max_header_bytes gets 431 with a problem body', async (t) => {
    const h = await startHarness(t, { overrides: { 'limits.max_header_bytes': 2048 } });
    const head = requestHead('GET', '/health/live', new URL(h.publicUrl).host, [
      ['X-Filler', 'a'.repeat(4096)],
    ]);
    const res = await rawExchange(h.publicUrl, [head]);
    const p = assertProblem(res, 431, 'invalid_request');
    assert.match(p.detail ?? '', /2048/);
  });

  test('case=many small headers over the default 16 KiB also get 431', async (t) => {
    const h = await startHarness(t);
    const headers: [string, string][] = Array.from({ length: 40 }, (_, i) => [
      `X-Filler-${i}`,
      'b'.repeat(500),
    ]);
    const res = await rawExchange(h.publicUrl, [
      requestHead('GET', '/health/live', new URL(h.publicUrl).host, headers),
    ]);
    assertProblem(res, 431, 'invalid_request');
  });

  test('case=a header section just under the limit is served', async (t) => {
    const h = await startHarness(t, { overrides: { 'limits.max_header_bytes': 2048 } });
    const head = requestHead('GET', '/health/live', new URL(h.publicUrl).host, [
      ['X-Filler', 'a'.repeat(1500)],
    ]);
    const res = await rawExchange(h.publicUrl, [head]);
    assert.deepEqual(assertJson(res, 200), { status: 'ok' });
  });

  test('case=malformed HTTP gets 400 with a problem body', async (t) => {
    const h = await startHarness(t);
    const res = await rawExchange(h.publicUrl, ['GET /health/live HTTP/1.1\r\nHost x\r\n\r\n']);
    assertProblem(res, 400, 'invalid_request');
  });
});

describe('edge › request deadline', () => {
  test('case=a handler that never answers gets 503 request_timeout', async (t) => {
    const latch = new Latch();
    t.after(() => latch.open());
    const h = await startHarness(t, {
      overrides: { 'limits.request_timeout': '1s' },
      beforeListen: (app) => {
        app.get('/test/never', async () => {
          await latch.promise;
          return { late: true };
        });
      },
    });
    const res = await send(h.publicUrl, '/test/never', { timeoutMs: 10_000 });
    assertProblem(res, 503, 'request_timeout');
    assert.ok(res.headers['x-request-id']);
    // The late answer is dropped, and the server goes on serving.
    latch.open();
    assert.deepEqual(assertJson(await send(h.publicUrl, '/health/live'), 200), { status: 'ok' });
  });

  test('case=a body that never finishes gets 503 request_timeout', async (t) => {
    const h = await startHarness(t, {
      overrides: { 'limits.request_timeout': '1s' },
      beforeListen: (app) => {
        app.post('/test/echo', async (req) => req.body);
      },
    });
    const head = requestHead('POST', '/test/echo', new URL(h.publicUrl).host, [
      ['Content-Type', 'application/json'],
      ['Content-Length', '100'],
    ]);
    const res = await rawExchange(h.publicUrl, [head, '{"name":'], { timeoutMs: 10_000 });
    assertProblem(res, 503, 'request_timeout');
  });

  test('case=requests that finish in time are unaffected and counted once', async (t) => {
    const h = await startHarness(t, { overrides: { 'limits.request_timeout': '1s' } });
    assert.equal((await send(h.publicUrl, '/health/live')).status, 200);
    await eventually('the request is counted', async () => {
      const metrics = await (await h.internal('/metrics')).text();
      return (
        sampleValue(metrics, 'service_http_requests_total', { route: '/health/live', status: '2xx' }) === 1
      );
    });
  });
});
