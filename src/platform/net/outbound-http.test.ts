// The outbound client against real HTTP receivers on loopback: the guard at resolution, on IP
// literals and on the connected socket; no redirects; the deadline; the response read cap.

import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { EgressGuard, STRICT_EGRESS } from './egress-guard.ts';
import { OutboundHttp, type Resolver } from './outbound-http.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

let server: Server;
let port = 0;
let handler: Handler = (_req, res) => res.end('ok');
let connections = 0;

before(async () => {
  server = createServer((req, res) => handler(req, res));
  server.on('connection', () => {
    connections++;
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as AddressInfo).port;
});
after(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const loopbackOnly = new EgressGuard({ allowlist: ['127.0.0.1/32'], allowPrivate: false });
const table: Record<string, string[]> = {
  'hooks.test': ['127.0.0.1'],
  'mixed.test': ['10.0.0.7', '127.0.0.1'],
  'mapped.test': ['::ffff:127.0.0.1'],
  'nat64.test': ['64:ff9b::7f00:1'],
};
const resolver: Resolver = async (host) => {
  const list = table[host];
  if (!list) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
  return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

const post = (
  http: OutboundHttp,
  url: string,
  guard: EgressGuard,
  extra: Partial<{ timeoutMs: number; maxResponseBytes: number }> = {},
) =>
  http.post({
    url,
    headers: { 'content-type': 'application/json' },
    body: '{}',
    guard,
    timeoutMs: extra.timeoutMs ?? 5000,
    maxResponseBytes: extra.maxResponseBytes ?? 65536,
  });

describe('outbound http', () => {
  test('an allowlisted loopback receiver gets the POST', async () => {
    const http = new OutboundHttp({ resolver });
    let seen = '';
    handler = (req, res) => {
      let b = '';
      req.on('data', (c) => {
        b += c;
      });
      req.on('end', () => {
        seen = `${req.method} ${req.headers['content-type']} ${b}`;
        res.statusCode = 204;
        res.end();
      });
    };
    const r = await post(http, `http://hooks.test:${port}/in`, loopbackOnly);
    assert.deepEqual(r, { kind: 'response', status: 204, bytesRead: 0 });
    assert.equal(seen, 'POST application/json {}');
    await http.close();
  });

  test('a name resolving to loopback is refused without an allowlist, before any connection', async () => {
    const http = new OutboundHttp({ resolver });
    const before = connections;
    for (const host of ['hooks.test', 'mapped.test', 'nat64.test']) {
      const r = await post(http, `http://${host}:${port}/`, new EgressGuard(STRICT_EGRESS));
      assert.equal(r.kind, 'egress_denied', host);
    }
    assert.equal(connections, before);
    await http.close();
  });

  test('a name with one private and one allowed answer dials only the allowed one', async () => {
    const http = new OutboundHttp({ resolver });
    handler = (_req, res) => res.end('fine');
    const r = await post(http, `http://mixed.test:${port}/`, loopbackOnly);
    assert.deepEqual(r, { kind: 'response', status: 200, bytesRead: 4 });
    await http.close();
  });

  test('IP literals are checked before the socket opens', async () => {
    const http = new OutboundHttp({ resolver });
    const before = connections;
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://[::ffff:7f00:1]:${port}/`,
      `http://[::1]:${port}/`,
    ]) {
      const r = await post(http, url, new EgressGuard(STRICT_EGRESS));
      assert.equal(r.kind, 'egress_denied', url);
    }
    assert.equal(connections, before);
    await http.close();
  });

  test('the connected address is checked even when resolution was not filtered', async () => {
    const http = new OutboundHttp({ resolver, filterResolution: false });
    let reached = false;
    handler = (_req, res) => {
      reached = true;
      res.end();
    };
    const r = await post(http, `http://hooks.test:${port}/`, new EgressGuard(STRICT_EGRESS));
    assert.deepEqual(r, { kind: 'egress_denied', reason: 'loopback' });
    assert.equal(reached, false);
    await http.close();
  });

  test('a redirect is an answer, never followed', async () => {
    const http = new OutboundHttp({ resolver });
    let hits = 0;
    handler = (req, res) => {
      hits++;
      if (req.url === '/moved') {
        res.statusCode = 307;
        res.setHeader('location', `http://127.0.0.1:${port}/target`);
      }
      res.end();
    };
    const r = await post(http, `http://hooks.test:${port}/moved`, loopbackOnly);
    assert.equal(r.kind === 'response' && r.status, 307);
    assert.equal(hits, 1);
    await http.close();
  });

  test('a receiver slower than the deadline is a timeout', async () => {
    const http = new OutboundHttp({ resolver });
    handler = (_req, res) => {
      setTimeout(() => res.end('late'), 1500).unref();
    };
    const r = await post(http, `http://hooks.test:${port}/`, loopbackOnly, { timeoutMs: 200 });
    assert.deepEqual(r, { kind: 'timeout' });
    await http.close();
  });

  test('at most maxResponseBytes of a large answer are read', async () => {
    const http = new OutboundHttp({ resolver });
    let finished = false;
    handler = (_req, res) => {
      const chunk = Buffer.alloc(16 * 1024, 120);
      let sent = 0;
      const pump = () => {
        while (sent < 4 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        finished = true;
        res.end();
      };
      res.on('error', () => undefined);
      pump();
    };
    const r = await post(http, `http://hooks.test:${port}/`, loopbackOnly, { maxResponseBytes: 65536 });
    assert.deepEqual(r, { kind: 'response', status: 200, bytesRead: 65536 });
    assert.equal(finished, false);
    await http.close();
  });

  test('an unknown name is a network error', async () => {
    const http = new OutboundHttp({ resolver });
    const r = await post(http, 'http://nowhere.test/', loopbackOnly);
    assert.equal(r.kind, 'network_error');
    await http.close();
  });
});

describe('outbound http › fetch (protocol libraries)', () => {
  const fetchOf = (http: OutboundHttp, url: string, guard: EgressGuard, maxResponseBytes = 65536) =>
    http.fetch({
      url,
      method: 'GET',
      headers: { accept: 'application/json' },
      guard,
      timeoutMs: 5000,
      maxResponseBytes,
    });

  test('answers a Fetch Response with status, headers and body', async () => {
    handler = (_req, res) => {
      res.writeHead(201, { 'content-type': 'application/json', 'x-one': 'a' });
      res.end('{"ok":true}');
    };
    const http = new OutboundHttp({ resolver });
    const res = await fetchOf(http, `http://hooks.test:${port}/x`, loopbackOnly);
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('x-one'), 'a');
    assert.deepEqual(await res.json(), { ok: true });
    await http.close();
  });

  test('a redirect is an answer, never followed; a refused address and an oversized answer throw', async () => {
    handler = (_req, res) => {
      res.writeHead(302, { location: 'http://hooks.test/elsewhere' });
      res.end();
    };
    const http = new OutboundHttp({ resolver });
    assert.equal((await fetchOf(http, `http://hooks.test:${port}/x`, loopbackOnly)).status, 302);
    await assert.rejects(fetchOf(http, `http://hooks.test:${port}/x`, new EgressGuard(STRICT_EGRESS)), {
      name: 'OutboundFailure',
      kind: 'egress_denied',
    });
    handler = (_req, res) => res.end('x'.repeat(2048));
    await assert.rejects(fetchOf(http, `http://hooks.test:${port}/x`, loopbackOnly, 1024), {
      name: 'OutboundFailure',
      kind: 'too_large',
    });
    await http.close();
  });
});
