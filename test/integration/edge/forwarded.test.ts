// The client address behind a reverse proxy (docs/operations.md, "Behind a reverse proxy"):
// Forwarded and X-Forwarded-For count only from peers in server.trusted_proxies, and the address
// they name is the one the per-network sign-in budget and the request log use. The test client
// connects from 127.0.0.1, so it plays the proxy when 127.0.0.1 is trusted.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, type TestContext, test } from 'node:test';
import { createLogger } from '../../../src/platform/log.ts';
import { startHarness } from '../../harness/harness.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import { movableClock, PASSWORD, REDIRECT } from '../../harness/signin-kit.ts';

const NETWORK_BUDGET = 2;

// The per-network budget is deployment-wide, and every test here sends from 127.0.0.1 into this
// file's database: each test runs on a clock standing still an hour after the previous one's, so
// its attempts fall in one budget window of their own.
let hour = 0;

async function setup(t: TestContext, trusted: boolean) {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  });
  hour++;
  const h = await startHarness(t, {
    clock: movableClock(Math.floor(Date.now() / 60_000) * 60_000 + hour * 3_600_000),
    log: createLogger('info', sink),
    overrides: {
      'security.budgets.network_attempts': NETWORK_BUDGET,
      ...(trusted ? { 'server.trusted_proxies': '127.0.0.1/32,::1' } : {}),
    },
  });
  const realm = await h.createRealm();
  await h.createClient(realm, {
    clientId: 'web-app',
    name: 'Web App',
    type: 'web',
    redirectUris: [REDIRECT],
  });
  await h.createUser(realm, { email: 'alice@example.com', password: PASSWORD });
  /** One wrong password from a client the proxy names in `headers`; the step's status. */
  const attempt = async (headers: Record<string, string>) => {
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' }, headers);
    const r = await tx.step('password', { password: 'not-the-password' }, headers);
    return r.status;
  };
  return { h, attempt, lines };
}

const from = (address: string) => ({ 'x-forwarded-for': `${address}, 127.0.0.1` });

describe('edge › forwarded headers', () => {
  test('case=behind a trusted proxy each client network has its own sign-in budget/mode=headless', async (t) => {
    const { attempt, lines } = await setup(t, true);
    const first = [];
    for (let i = 0; i <= NETWORK_BUDGET; i++) first.push(await attempt(from('198.51.100.7')));
    assert.deepEqual(first, [200, 200, 429], 'the first client spent its network budget');
    assert.equal(
      await attempt(from('203.0.113.9')),
      200,
      'another client behind the same proxy is not locked out',
    );
    assert.equal(
      await attempt({ forwarded: 'for="[2001:db8:cafe::17]:4711";proto=https' }),
      200,
      'Forwarded names a client too',
    );
    // The steps carried the proxy's headers (the starts did not): their request lines name the client.
    const steps = lines.filter((l) => l.msg === 'request' && String(l.route).endsWith('/:id/password'));
    assert.deepEqual(
      [...new Set(steps.map((l) => l.client_address))],
      ['198.51.100.7', '203.0.113.9', '2001:db8:cafe::17'],
    );
  });

  test('case=without a trusted proxy forwarding headers are ignored and the socket counts/mode=headless', async (t) => {
    const { attempt, lines } = await setup(t, false);
    const statuses = [
      await attempt(from('198.51.100.7')),
      await attempt(from('203.0.113.9')),
      await attempt({ forwarded: 'for=192.0.2.1' }),
    ];
    assert.deepEqual(statuses, [200, 200, 429], 'a client cannot choose its network by header');
    const logged = new Set(lines.filter((l) => l.msg === 'request').map((l) => l.client_address));
    assert.deepEqual([...logged], ['127.0.0.1'], 'the socket address is logged');
  });

  test('case=malformed forwarding headers from a trusted proxy are ignored, never a 500/mode=headless', async (t) => {
    const { attempt } = await setup(t, true);
    const statuses = [];
    const malformed: Record<string, string>[] = [
      { 'x-forwarded-for': 'not an address' },
      { 'x-forwarded-for': '999.1.1.1, ,' },
      { forwarded: 'for="unterminated' },
    ];
    for (const headers of malformed) {
      statuses.push(await attempt(headers));
    }
    // Each counted as the proxy itself (127.0.0.0/24): two attempts, then the budget is spent.
    assert.deepEqual(statuses, [200, 200, 429]);
  });
});
