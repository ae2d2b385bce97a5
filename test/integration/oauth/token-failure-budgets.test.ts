// The token endpoint's failure budgets (decision D23, docs/security.md "Abuse budgets"): failed
// client authentication per presented client_id and per client network, invalid_grant answers per
// client. A spent budget answers 429 slow_down with Retry-After before any secret is checked, so
// even the right secret waits for the window to end; successes spend nothing.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { type HarnessOptions, startHarness } from '../../harness/harness.ts';
import { newVerifier } from '../../harness/signin-driver.ts';
import { count, REDIRECT } from '../../harness/signin-kit.ts';
import {
  clientSecret,
  oauthPost,
  seedGrant,
  seedResource,
  seedServiceClient,
} from '../../harness/token-kit.ts';

const LIMIT = 60; // the default of each budget

async function setup(t: TestContext, opts: HarnessOptions = {}) {
  const h = await startHarness(t, opts);
  const realm = await h.createRealm();
  const svc = await seedServiceClient(h, realm, 'svc');
  const orders = await seedResource(h, realm, {
    audience: 'https://orders.example.com',
    scopes: ['orders:read'],
  });
  await seedGrant(h, realm, svc.client, orders, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const token = (secret: string, headers: Record<string, string> = {}, clientId = 'svc') =>
    h.get(`/realms/${realm.name}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: clientId,
        client_secret: secret,
      }),
    });
  // Budget windows are aligned minutes: start each test at the beginning of one, so a run that
  // straddles a minute boundary does not see its count reset halfway (seen once on a slow run).
  const now = h.clock.now().getTime();
  h.clock.advance(60_000 - (now % 60_000) + 1);
  return { h, realm, svc, token };
}

const statuses = async (responses: Promise<Response>[]) =>
  (await Promise.all(responses)).map((r) => r.status);

describe('token endpoint › failure budgets', () => {
  test('case=wrong client secrets meet slow_down, and then the right secret waits too/mode=headless', async (t) => {
    const { h, realm, svc, token } = await setup(t);
    const answers: number[] = [];
    for (let i = 0; i < LIMIT + 5; i++) answers.push((await token(`wrong-${i}`)).status);
    assert.deepEqual(answers, [...Array(LIMIT).fill(401), ...Array(5).fill(429)]);

    const right = await token(svc.creds.secret);
    assert.equal(right.status, 429, 'refused before the secret is checked');
    const body = (await right.json()) as { error: string };
    assert.equal(body.error, 'slow_down');
    const retry = Number(right.headers.get('retry-after'));
    assert.ok(retry >= 1 && retry <= 60, `Retry-After ${retry}`);
    // The same secret, guessed at another endpoint, is under the same budget.
    const introspect = await oauthPost(h, realm, 'introspect', { token: 'x' }, svc.creds);
    assert.deepEqual([introspect.status, introspect.body.error], [429, 'slow_down']);

    // Slowed, not locked: the next window takes the right secret.
    h.clock.advance(retry * 1000);
    assert.equal((await token(svc.creds.secret)).status, 200);
  });

  test('case=concurrent wrong secrets get exactly the budget of 401s/mode=headless', async (t) => {
    const { token } = await setup(t);
    const all = await statuses(Array.from({ length: LIMIT + 20 }, (_, i) => token(`wrong-${i}`)));
    assert.equal(all.filter((s) => s === 401).length, LIMIT, String(all));
    assert.equal(all.filter((s) => s === 429).length, 20);
  });

  test('case=successful requests spend no failure budget/mode=headless', async (t) => {
    const { h, realm, svc, token } = await setup(t, {
      overrides: { 'security.budgets.client_auth_failures': 2 },
    });
    for (let i = 0; i < 5; i++) assert.equal((await token(svc.creds.secret)).status, 200);
    const counters = "select 1 from abuse_counters where bucket like 'clientauth:client:' || $1 || ':%'";
    assert.equal(await count(h, counters, [realm.id]), 0, 'nothing written');
    assert.deepEqual(await statuses([token('wrong-1')]), [401]);
    assert.deepEqual(await statuses([token('wrong-2')]), [401]);
    assert.deepEqual(await statuses([token(svc.creds.secret)]), [429]);
  });

  test('case=failed client authentication counts per network, whatever client_id it names/mode=headless', async (t) => {
    const { svc, token } = await setup(t, {
      overrides: {
        'security.budgets.network_auth_failures': 3,
        'server.trusted_proxies': '127.0.0.1/32',
      },
    });
    const attacker = { 'x-forwarded-for': '198.51.100.7' };
    const tried = [];
    for (const id of ['nobody-1', 'nobody-2', 'svc', 'nobody-3'])
      tried.push((await token('wrong', attacker, id)).status);
    assert.deepEqual(tried, [401, 401, 401, 429]);
    assert.equal((await token(svc.creds.secret, attacker)).status, 429, "the attacker's network waits");
    assert.equal(
      (await token(svc.creds.secret, { 'x-forwarded-for': '203.0.113.9' })).status,
      200,
      'others do not',
    );
  });

  test('case=two processes share the counts; the other one learns at its first failure/mode=headless', async (t) => {
    const { h, realm, svc, token } = await setup(t, {
      overrides: { 'security.budgets.client_auth_failures': 3 },
    });
    const other = await startHarness(t, {
      db: h.ctx.db,
      clock: h.clock, // the same budget window as the first process
      overrides: { 'security.budgets.client_auth_failures': 3 },
    });
    assert.deepEqual(await statuses([token('a'), token('b'), token('c')]), [401, 401, 401]);
    const viaOther = (secret: string) =>
      other.get(`/realms/${realm.name}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: 'svc',
          client_secret: secret,
        }),
      });
    assert.equal((await viaOther('d')).status, 429, 'counted over the shared budget');
    assert.equal((await viaOther(svc.creds.secret)).status, 429, 'and refused before checking from then on');
  });

  test('case=invalid_grant answers per client meet slow_down; other clients are not slowed/mode=headless', async (t) => {
    const { h, realm } = await setup(t);
    const web = async (clientId: string) => {
      const client = await h.createClient(realm, {
        clientId,
        name: clientId,
        type: 'web',
        redirectUris: [REDIRECT],
        grantTypes: ['authorization_code', 'refresh_token'],
        tokenEndpointAuthMethod: 'client_secret_basic',
      });
      return { clientId, secret: await clientSecret(h, realm, client) };
    };
    const a = await web('web-a');
    const b = await web('web-b');
    const badCode = (creds: { clientId: string; secret: string }, i: number) =>
      oauthPost(
        h,
        realm,
        'token',
        {
          grant_type: 'authorization_code',
          code: `no-such-code-${i}`,
          redirect_uri: REDIRECT,
          code_verifier: newVerifier(),
        },
        creds,
      );
    const errors: string[] = [];
    for (let i = 0; i < LIMIT + 3; i++) errors.push((await badCode(a, i)).body.error);
    assert.deepEqual(errors, [...Array(LIMIT).fill('invalid_grant'), ...Array(3).fill('slow_down')]);
    const refresh = await oauthPost(
      h,
      realm,
      'token',
      { grant_type: 'refresh_token', refresh_token: 'x' },
      a,
    );
    assert.deepEqual([refresh.status, refresh.body.error], [429, 'slow_down']);
    assert.ok(Number(refresh.headers.get('retry-after')) >= 1);
    assert.equal((await badCode(b, 0)).body.error, 'invalid_grant', 'another client is not slowed');
  });
});
