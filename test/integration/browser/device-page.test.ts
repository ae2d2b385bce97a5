// The login UI's device page in a real Chromium (docs/oauth-device.md): a device asks for codes,
// the person opens verification_uri_complete (code filled in), signs in, and is told to return to
// the device, which then gets its tokens; a wrong code typed at verification_uri is explained.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import { collectErrors, enterPassword, startUiHarness } from '../../harness/login-ui-kit.ts';
import { json } from '../../harness/signin-driver.ts';

const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code';
const EMAIL = 'dora@example.com';
const PASSWORD = 'a long and fine password of dora';

describe('device page of the built-in login UI', { skip: NO_BROWSER ?? false }, () => {
  test('case=the person enters the code, signs in and returns to the device, which gets tokens', async (t) => {
    const h = await startUiHarness(t);
    const realm = await h.createRealm();
    await h.createUser(realm, { email: EMAIL, password: PASSWORD, displayName: 'Dora' });
    await h.createClient(realm, {
      clientId: 'tv-app',
      name: 'Living Room TV',
      type: 'device',
      redirectUris: [],
      grantTypes: [DEVICE_GRANT],
      tokenEndpointAuthMethod: 'none',
    });
    const form = (path: string, body: Record<string, string>) =>
      h.get(`/realms/${realm.name}/oauth/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(body).toString(),
      });
    const codes = await json(await form('device_authorization', { client_id: 'tv-app' }));
    assert.equal(codes.status, 200, JSON.stringify(codes.body));

    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);

    // A mistyped code at the plain verification address is explained, and nothing starts.
    await page.goto(codes.body.verification_uri);
    await page.getByRole('heading', { name: 'Connect a device' }).waitFor();
    await page.getByLabel('Code').fill('BBBB-BBBB');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('alert').filter({ hasText: 'That code is not valid' }).waitFor();
    // The browser logs the refused request (400) itself; nothing else may be logged from here on.
    errors.length = 0;

    // The complete address fills the code in.
    await page.goto(codes.body.verification_uri_complete);
    assert.equal(await page.getByLabel('Code').inputValue(), codes.body.user_code);
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByText('Sign in to continue to Living Room TV').waitFor();
    assert.equal(new URL(page.url()).searchParams.get('user_code'), null, 'the code leaves the address bar');
    await enterPassword(page, EMAIL, PASSWORD);
    await page.getByRole('heading', { name: 'Device connected' }).waitFor();
    await page.getByText('You can return to your device now.').waitFor();

    const tokens = await json(
      await form('token', {
        grant_type: DEVICE_GRANT,
        client_id: 'tv-app',
        device_code: codes.body.device_code,
      }),
    );
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.ok(tokens.body.access_token && tokens.body.id_token);
    assert.deepEqual(errors, []);
  });
});
