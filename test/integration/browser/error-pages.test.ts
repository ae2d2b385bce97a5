// What a person sees in Chromium when an application sends them to the authorization or logout
// endpoint with a request that cannot go back to it (decision D25): a page in the login UI's
// style and their language naming the problem code and the request id, which Chromium renders
// under the page's Content-Security-Policy without a single violation.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import { startHarness } from '../../harness/harness.ts';
import { collectErrors } from '../../harness/login-ui-kit.ts';
import { authorizeQuery, REDIRECT } from '../../harness/signin-kit.ts';

describe('browser › error pages of the authorization and logout endpoints', {
  skip: NO_BROWSER ?? false,
}, () => {
  test('case=an unknown client and an unregistered URI show a page, in English or German/mode=browser', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    await h.createClient(realm, {
      clientId: 'web-app',
      name: 'Web App',
      type: 'web',
      redirectUris: [REDIRECT],
      postLogoutRedirectUris: ['https://app.example.com/signed-out'],
    });
    const base = `${h.publicUrl}/realms/${realm.name}/oauth`;
    const browser = await launchBrowser(t);

    const english = await browser.browser.newContext({ locale: 'en-US' });
    const page = await english.newPage();
    const errors = collectErrors(page);
    const res = await page.goto(`${base}/authorize?${authorizeQuery('no-such-client', REDIRECT).params}`);
    assert.equal(res?.status(), 400);
    const requestId = res?.headers()['x-request-id'];
    assert.ok(requestId);
    await page.getByRole('heading', { name: 'The application sent a request that cannot be used' }).waitFor();
    const shown = (await page.getByRole('alert').textContent()) ?? '';
    assert.match(shown, /Error code\s*invalid_request/);
    assert.ok(shown.includes(requestId), 'the request id to quote');
    assert.equal(await page.title(), 'Sign-in error');
    // The style block counted under the policy (a blocked one would leave the body unstyled).
    const background = await page.evaluate<string>('getComputedStyle(document.body).backgroundColor');
    assert.notEqual(background, 'rgba(0, 0, 0, 0)');
    assert.equal(await page.locator('script').count(), 0);

    const german = await browser.browser.newContext({ locale: 'de-DE' });
    const de = await german.newPage();
    const deErrors = collectErrors(de);
    const refused = await de.goto(
      `${base}/logout?client_id=web-app&post_logout_redirect_uri=${encodeURIComponent('https://evil.example/')}`,
    );
    assert.equal(refused?.status(), 400);
    assert.equal(new URL(de.url()).host, new URL(h.publicUrl).host, 'not sent to the unregistered URI');
    await de.getByRole('heading', { name: 'Die Anwendung hat eine Anfrage gesendet' }).waitFor();
    assert.equal(await de.title(), 'Fehler bei der Abmeldung');
    assert.match((await de.getByRole('alert').textContent()) ?? '', /Anfrage-ID/);

    // ui_locales chooses over the browser's language.
    await de.goto(
      `${base}/authorize?${authorizeQuery('web-app', 'https://evil.example/cb', { ui_locales: 'en' }).params}`,
    );
    await de.getByRole('heading', { name: 'The application sent a request that cannot be used' }).waitFor();
    // Chromium reports each 400 navigation itself; anything else (a policy violation) is a fault.
    const faults = [...errors, ...deErrors].filter((e) => !/status of 400/.test(e));
    assert.deepEqual(faults, []);
  });
});
