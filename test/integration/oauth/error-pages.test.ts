// Errors the authorization and logout endpoints cannot send back to the client (decision D25,
// docs/oauth-endpoints.md "Error pages"): a browser gets an HTML page in its language with the
// problem code and request id, under a strict Content-Security-Policy; a caller that asks for JSON
// keeps the problem document. The Chromium side is test/integration/browser/error-pages.test.ts.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { authorizeQuery, REDIRECT, signinSetup } from '../../harness/signin-kit.ts';

const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

async function setup(t: TestContext) {
  const s = await signinSetup(t, {
    client: { postLogoutRedirectUris: ['https://app.example.com/signed-out'] },
  });
  const get = (path: string, headers: Record<string, string>) =>
    s.h.get(`/realms/${s.realm.name}/oauth/${path}`, { headers, redirect: 'manual' });
  return { ...s, get };
}

const unknownClient = () => `authorize?${authorizeQuery('no-such-client', REDIRECT).params}`;

describe('oauth › error pages', () => {
  test('case=an API caller asking for JSON keeps the problem document/mode=browser', async (t) => {
    const { get } = await setup(t);
    for (const accept of ['application/json', 'application/problem+json', '*/*']) {
      const r = await get(unknownClient(), { accept });
      assert.equal(r.status, 400, accept);
      assert.match(r.headers.get('content-type') ?? '', /^application\/problem\+json/, accept);
      const body = (await r.json()) as { code: string; error: string };
      assert.deepEqual([body.code, body.error], ['invalid_request', 'invalid_request']);
    }
    const logout = await get('logout?client_id=web-app&post_logout_redirect_uri=https://evil.example/', {
      accept: 'application/json',
    });
    assert.equal(logout.status, 400);
    assert.equal(((await logout.json()) as { code: string }).code, 'invalid_request');
  });

  test('case=a browser gets a page in its language with the code and request id/mode=browser', async (t) => {
    const { h, get } = await setup(t);
    const r = await get(unknownClient(), {
      accept: BROWSER_ACCEPT,
      'accept-language': 'de-DE,de;q=0.9,en;q=0.5',
      'x-request-id': 'req-<b>1</b>',
    });
    assert.equal(r.status, 400);
    assert.equal(r.headers.get('location'), null, 'never redirected to an unverified URI');
    assert.match(r.headers.get('content-type') ?? '', /^text\/html; charset=utf-8/);
    const csp = r.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /style-src 'sha256-[A-Za-z0-9+/]+=*'/);
    assert.doesNotMatch(csp, /unsafe-inline|script-src/);
    assert.equal(r.headers.get('cache-control'), 'no-store');
    const html = await r.text();
    assert.match(html, /<html lang="de">/);
    assert.match(html, /Fehlercode/);
    assert.match(html, /<code>invalid_request<\/code>/);
    assert.match(html, /req-&lt;b&gt;1&lt;\/b&gt;/, 'the request id, escaped');
    assert.ok(!html.includes('<b>1</b>'));
    assert.ok(!/<script/i.test(html));

    // ui_locales wins over Accept-Language; an unregistered redirect URI is a page, not a redirect.
    const other = await get(
      `authorize?${authorizeQuery('web-app', 'https://evil.example/cb', { ui_locales: 'en' }).params}`,
      { accept: BROWSER_ACCEPT, 'accept-language': 'de' },
    );
    assert.equal(other.status, 400);
    assert.equal(other.headers.get('location'), null);
    const otherHtml = await other.text();
    assert.match(otherHtml, /<html lang="en">/);
    assert.match(otherHtml, /redirect_uri is missing or not registered/);
    assert.match(otherHtml, new RegExp(`<code>${other.headers.get('x-request-id')}</code>`));

    const noRealm = await h.get(`/realms/no-such-realm/oauth/${unknownClient()}`, {
      headers: { accept: BROWSER_ACCEPT },
    });
    assert.equal(noRealm.status, 404);
    assert.match(await noRealm.text(), /This address does not exist/);
  });

  test('case=a refused logout is a page for a browser, in its language/mode=browser', async (t) => {
    const { get } = await setup(t);
    const r = await get(
      'logout?client_id=web-app&post_logout_redirect_uri=https://evil.example/&ui_locales=de',
      {
        accept: BROWSER_ACCEPT,
      },
    );
    assert.equal(r.status, 400);
    assert.equal(r.headers.get('location'), null);
    const html = await r.text();
    assert.match(html, /Fehler bei der Abmeldung/);
    assert.match(html, /post_logout_redirect_uri is not registered for this client/);
  });
});
