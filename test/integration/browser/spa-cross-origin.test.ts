// A single-page app on its own origin, in a real Chromium (docs/signin.md, "Login UI on another
// origin"): its own login page drives the sign-in transaction cross-origin with credentials, and
// the app completes the code flow with PKCE through oauth4webapi, refreshes, reads UserInfo with
// the API's access token and calls the API, a resource server that verifies the JWT with jose.
// What only a browser enforces is what this proves: CORS answers, the pa_tx cookie travelling on
// fetch from another origin of the same site, and a page on a refused origin reading nothing.
//
// Origins on 127.0.0.1 (one site): the server, the app (which also hosts the login page), the
// API, and a page on an origin the realm does not allow. The app's pages under the name
// localhost stand for a login UI on another site (docs/signin.md): the browser keeps pa_tx from
// it, and headless mode works from there.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import { startHarness } from '../../harness/harness.ts';
import { PASSWORD } from '../../harness/signin-kit.ts';
import { seedGrant, seedResource } from '../../harness/token-kit.ts';

const FIXTURES = join(import.meta.dirname, '../../fixtures/spa');
const OAUTH4WEBAPI = join(import.meta.dirname, '../../../node_modules/oauth4webapi/build/index.js');
const PAGES = ['index.html', 'callback.html', 'login.html', 'app.js', 'login.js', 'elsewhere.html'];
const TYPES: Record<string, string> = { html: 'text/html', js: 'text/javascript', json: 'application/json' };

// Run in the page from source text: functions handed to page.evaluate would carry the test
// transpiler's helpers, which the page does not have.
const IN_PAGE_ATTEMPTS = `async (url) => {
  const attempt = async (init) => {
    try {
      const res = await fetch(url, { credentials: 'include', ...init });
      return 'read ' + res.status;
    } catch (e) {
      return e.name;
    }
  };
  return {
    state: await attempt({}),
    identify: await attempt({
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-csrf-token': 'guess' },
      body: JSON.stringify({ identifier: 'alice@example.com' }),
    }),
    start: await attempt({ method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }),
  };
}`;

// Headless mode from a page: start, identify, password, with the continuation token only.
const IN_PAGE_HEADLESS = `async ({ base, start, password }) => {
  const post = async (path, body, token) => {
    const res = await fetch(base + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { 'x-transaction-token': token } : {}) },
      body: JSON.stringify(body),
    });
    return res.json();
  };
  const started = await post('', start);
  const step = (path, body) => post('/' + started.transaction_id + path, body, started.continuation_token);
  await step('/identify', { identifier: 'alice@example.com' });
  const done = await step('/password', { password });
  return { status: done.status, redirect_to: done.redirect_to };
}`;

/** The same origin under the name localhost: another site than 127.0.0.1 (ports never count). */
const otherSite = (origin: string) => origin.replace('//127.0.0.1:', '//localhost:');

type Handler = (req: IncomingMessage, res: ServerResponse) => Promise<void> | void;

/** A listener on an ephemeral port of 127.0.0.1, closed when the test ends. */
async function listen(t: TestContext, handler: Handler): Promise<string> {
  const server = createServer((req, res) => {
    Promise.resolve(handler(req, res)).catch((e: unknown) => {
      res.writeHead(500).end(String(e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Static files: the fixture pages, the library as an ES module, and the app's configuration. */
function staticSite(config: () => Record<string, unknown>): Handler {
  return async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    let body: string;
    let type: string;
    if (path === '/config.json') {
      body = JSON.stringify(config());
      type = TYPES.json as string;
    } else if (path === '/vendor/oauth4webapi.js') {
      body = await readFile(OAUTH4WEBAPI, 'utf8');
      type = TYPES.js as string;
    } else {
      const name = path === '/' ? 'index.html' : path.slice(1);
      if (!PAGES.includes(name)) {
        res.writeHead(404).end();
        return;
      }
      body = await readFile(join(FIXTURES, name), 'utf8');
      type = TYPES[name.split('.').pop() ?? ''] as string;
    }
    res.writeHead(200, { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-store' }).end(body);
  };
}

test('an SPA on another origin signs in through its own login page, refreshes, reads UserInfo and calls its API', {
  skip: NO_BROWSER ?? false,
}, async (t) => {
  const h = await startHarness(t, { publicOriginIsListener: true });
  const realm = await h.createRealm();
  const issuer = `${h.publicUrl}/realms/${realm.name}`;
  const jwks = createRemoteJWKSet(new URL(`${issuer}/jwks`));

  // The API: verifies the access token offline against the realm's key set, for its own audience,
  // and answers the app's origin with CORS.
  let spa = '';
  let apiAudience = '';
  const apiCalls: { status: number; aud?: unknown }[] = [];
  const api = await listen(t, async (req, res) => {
    const cors: Record<string, string> =
      req.headers.origin === spa
        ? { 'access-control-allow-origin': spa, vary: 'Origin' }
        : { vary: 'Origin' };
    if (req.method === 'OPTIONS') {
      const allowed = req.headers.origin === spa;
      res
        .writeHead(204, {
          ...cors,
          ...(allowed
            ? { 'access-control-allow-headers': 'authorization', 'access-control-allow-methods': 'GET' }
            : {}),
        })
        .end();
      return;
    }
    const token = /^Bearer (\S+)$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
    try {
      const { payload } = await jwtVerify(token, jwks, { issuer, audience: apiAudience, typ: 'at+jwt' });
      apiCalls.push({ status: 200, aud: payload.aud });
      res
        .writeHead(200, { ...cors, 'content-type': 'application/json' })
        .end(JSON.stringify({ sub: payload.sub, scope: payload.scope, orders: [{ id: 'ord_1' }] }));
    } catch {
      apiCalls.push({ status: 401 });
      res.writeHead(401, { ...cors, 'www-authenticate': 'Bearer error="invalid_token"' }).end('{}');
    }
  });
  apiAudience = api;

  spa = await listen(
    t,
    staticSite(() => ({
      issuer,
      server: h.publicUrl,
      client_id: 'orders-spa',
      scope: 'openid profile email orders:read',
      api_audience: apiAudience,
      api_url: `${api}/orders`,
    })),
  );
  const elsewhere = await listen(
    t,
    staticSite(() => ({})),
  );

  await h.setPolicy(realm, { interaction: { login_ui_url: `${spa}/login.html` } });
  const client = await h.createClient(realm, {
    clientId: 'orders-spa',
    name: 'Orders SPA',
    type: 'spa',
    redirectUris: [`${spa}/callback.html`],
    // The app's pages also under the name localhost: another site than the server's 127.0.0.1.
    allowedOrigins: [spa, otherSite(spa)],
    tokenEndpointAuthMethod: 'none',
  });
  const resource = await seedResource(h, realm, { audience: apiAudience, scopes: ['orders:read'] });
  await seedGrant(h, realm, client, resource, { scopes: ['orders:read'] });
  const user = await h.createUser(realm, {
    email: 'alice@example.com',
    password: PASSWORD,
    displayName: 'Alice Example',
  });

  const { newContext } = await launchBrowser(t);

  await t.test('the whole flow, as a person clicks through it', async () => {
    const context = await newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(String(e)));

    await page.goto(`${spa}/`);
    await page.locator('#sign-in').click();
    // authorize -> 303 to the app's login page with the transaction, and the pa_tx cookie set.
    await page.waitForURL((u) => u.origin === spa && u.pathname === '/login.html');
    await page.locator('#form').waitFor({ state: 'visible' });
    assert.equal(
      await page.locator('#client').textContent(),
      'Orders SPA',
      'the state was read cross-origin',
    );
    const txCookie = (await context.cookies()).find((c) => c.name === 'pa_tx');
    assert.ok(txCookie, 'the browser holds pa_tx');
    assert.equal(txCookie.httpOnly, true);
    assert.equal(txCookie.sameSite, 'Strict');

    await page.locator('#identifier').fill('alice@example.com');
    await page.locator('#password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((u) => u.origin === spa && u.pathname === '/callback.html');
    await page.locator('#result:not(:empty), #error:not(:empty)').first().waitFor();
    assert.equal(await page.locator('#error').textContent(), '', problems.join('\n'));
    const result = JSON.parse((await page.locator('#result').textContent()) ?? '');

    assert.equal(result.sub, user.id);
    assert.equal(result.refreshed, true, 'the refresh rotated both tokens');
    assert.deepEqual(result.userinfo, {
      sub: user.id,
      name: 'Alice Example',
      updated_at: result.userinfo.updated_at,
      email: 'alice@example.com',
      email_verified: true,
    });
    assert.equal(result.api_status, 200);
    assert.equal(result.api.sub, user.id);
    assert.equal(result.api.scope, 'openid profile email orders:read');
    assert.deepEqual(apiCalls, [{ status: 200, aud: [apiAudience, `${issuer}/oauth/userinfo`] }]);

    // Completion set the SSO cookie on the server's host and cleared the transaction's.
    const cookies = await context.cookies(`${issuer}/oauth/authorize`);
    const sid = cookies.find((c) => c.name === 'pa_sid');
    assert.ok(sid, 'pa_sid was stored from a cross-origin fetch response');
    assert.equal(sid.sameSite, 'Lax');
    assert.equal(sid.httpOnly, true);
    assert.equal(
      (await context.cookies()).find((c) => c.name === 'pa_tx'),
      undefined,
      'pa_tx cleared',
    );
    await context.close();
  });

  await t.test('a page on an origin the realm does not allow reads nothing', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${spa}/`);
    await page.locator('#sign-in').click();
    await page.waitForURL((u) => u.origin === spa && u.pathname === '/login.html');
    await page.locator('#form').waitFor({ state: 'visible' });
    const login = new URL(page.url());
    const state = `${h.publicUrl}/api/v1/realms/${realm.name}/auth/transactions/${login.searchParams.get('transaction_id')}`;

    // Same site, so the browser would send pa_tx; CORS is what keeps the answer from the page.
    const other = await context.newPage();
    await other.goto(`${elsewhere}/elsewhere.html`);
    const outcome = await other.evaluate(`(${IN_PAGE_ATTEMPTS})(${JSON.stringify(state)})`);
    assert.deepEqual(outcome, { state: 'TypeError', identify: 'TypeError', start: 'TypeError' });

    // The allowed origin still reads the same state with the same cookie.
    const own = await page.evaluate(
      `fetch(${JSON.stringify(state)}, { credentials: 'include' }).then((r) => r.status)`,
    );
    assert.equal(own, 200);
    await context.close();
  });

  await t.test('from another site the cookie stays home, and headless mode still signs in', async () => {
    const context = await newContext();
    const page = await context.newPage();
    await page.goto(`${spa}/`);
    await page.locator('#sign-in').click();
    await page.waitForURL((u) => u.origin === spa && u.pathname === '/login.html');
    await page.locator('#form').waitFor({ state: 'visible' });
    const login = new URL(page.url());
    const base = `${h.publicUrl}/api/v1/realms/${realm.name}/auth/transactions`;
    const state = `${base}/${login.searchParams.get('transaction_id')}`;

    // An allowed origin on another site: CORS lets it read the answer, but the browser keeps the
    // SameSite cookie from a cross-site request, so the transaction refuses it.
    const other = await context.newPage();
    await other.goto(`${otherSite(spa)}/elsewhere.html`);
    const crossSite = await other.evaluate(
      `fetch(${JSON.stringify(state)}, { credentials: 'include' }).then(async (r) => [r.status, (await r.json()).detail])`,
    );
    assert.deepEqual(crossSite, [403, 'this transaction needs its browser cookie']);

    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    const done = (await other.evaluate(
      `(${IN_PAGE_HEADLESS})(${JSON.stringify({
        base,
        start: {
          client_id: 'orders-spa',
          redirect_uri: `${spa}/callback.html`,
          scope: 'openid',
          code_challenge: challenge,
          code_challenge_method: 'S256',
        },
        password: PASSWORD,
      })})`,
    )) as { status: string; redirect_to: string };
    assert.equal(done.status, 'completed', JSON.stringify(done));
    assert.ok(new URL(done.redirect_to).searchParams.get('code'), done.redirect_to);
    await context.close();
  });
});
