// The login UI's HOTP and remember-device screens in a real Chromium (docs/login-ui.md;
// docs/security.md): a wrong token code is answered in plain words, the right one leads to
// "Remember this browser?", and the remembered browser then skips the token at its next sign-in.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeBase32, encodeBase32 } from '../../../src/mfa/base32.ts';
import { storeHotp } from '../../../src/mfa/index.ts';
import { hotp } from '../../../src/mfa/otp.ts';
import { newTotpSecret } from '../../../src/mfa/otpauth-uri.ts';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import { collectErrors, enterPassword, shopClient, startUiHarness } from '../../harness/login-ui-kit.ts';
import { authorizeQuery } from '../../harness/signin-kit.ts';

describe('built-in login UI › HOTP and remembered browsers', { skip: NO_BROWSER ?? false }, () => {
  test('case=HOTP code, remember this browser, then the token is skipped', async (t) => {
    const h = await startUiHarness(t);
    const realm = await h.createRealm();
    await h.setPolicy(realm, {
      mfa: { allowed_factors: ['totp', 'hotp', 'recovery_code'] },
      login: { remember_devices: true },
    });
    const callback = await shopClient(h, realm);
    const user = await h.createUser(realm, { email: 'alice@example.com', password: 'the first password' });
    const secret = encodeBase32(newTotpSecret());
    const keyring = h.ctx.keyring;
    assert.ok(keyring);
    await h.ctx.db.tx((q) =>
      storeHotp(q, keyring, {
        realmId: realm.id,
        userId: user.id,
        id: 'fen_browsertest',
        secret: decodeBase32(secret),
        counter: 0,
        now: h.clock.now(),
      }),
    );
    // prompt=login: the browser's SSO session is not reused, so each visit signs in again.
    const authorizeUrl = () =>
      `${h.publicUrl}/realms/${realm.name}/oauth/authorize?${authorizeQuery('shop', callback, { prompt: 'login' }).params}`;

    const browser = await launchBrowser(t);
    const context = await browser.newContext();
    const page = await context.newPage();
    const errors = collectErrors(page);
    await page.goto(authorizeUrl());
    await enterPassword(page, 'alice@example.com', 'the first password');
    await page.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    await page
      .getByLabel('Token code')
      .fill('000000' === hotp(decodeBase32(secret), 0) ? '111111' : '000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').filter({ hasText: 'That code is not correct' }).waitFor();
    await page.getByLabel('Token code').fill(hotp(decodeBase32(secret), 0));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('heading', { name: 'Remember this browser?' }).waitFor();
    await page.getByRole('button', { name: 'Remember this browser' }).click();
    await page.waitForURL(/\/callback\?/);
    assert.ok(new URL(page.url()).searchParams.get('code'));
    const device = (await context.cookies()).find((c) => c.name === 'pa_rd');
    assert.ok(device, 'the browser holds pa_rd');
    assert.equal(device.httpOnly, true);
    assert.equal(device.path, `/api/v1/realms/${realm.name}/auth/`);

    // The same browser signs in again: password only, straight back to the application.
    h.clock.advance(1000);
    const again = await context.newPage();
    errors.push(...collectErrors(again));
    await again.goto(authorizeUrl());
    await enterPassword(again, 'alice@example.com', 'the first password');
    await again.waitForURL(/\/callback\?/);
    assert.ok(new URL(again.url()).searchParams.get('code'));

    // A fresh browser profile is asked for the token.
    const other = await (await browser.newContext()).newPage();
    errors.push(...collectErrors(other));
    await other.goto(authorizeUrl());
    await enterPassword(other, 'alice@example.com', 'the first password');
    await other.getByRole('heading', { name: 'Two-step verification' }).waitFor();
    assert.ok(await other.getByLabel('Token code').isVisible());
    // The callback page does not exist and the wrong code answers 200 with a failure: only 404s.
    assert.deepEqual(
      errors.filter((e) => !/status of 404/.test(e)),
      [],
    );
  });
});
