// The page a recovery's setup link opens, in a real Chromium (docs/recovery.md): an operator
// recovers an account, the mailed link opens the login UI, the person chooses a new password, and
// the spent link is explained when opened again.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CLI_CLIENT_ID } from '../../../src/clients/builtin-clients.ts';
import { apiCaller, CLI_REDIRECT } from '../../harness/api-kit.ts';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import { startHarness } from '../../harness/harness.ts';
import { collectErrors } from '../../harness/login-ui-kit.ts';
import { deliverQueued, linkIn, startMailSink } from '../../harness/mail-kit.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import { actionTypes } from '../../harness/signin-kit.ts';

const OWNER = 'lost@example.com';
const NEW_PASSWORD = 'a fresh and long password of mine';

describe('recovery setup page of the built-in login UI', { skip: NO_BROWSER ?? false }, () => {
  test('case=the recovered person opens the mailed link and chooses a new password; the link works once', async (t) => {
    const mail = await startMailSink(t);
    const h = await startHarness(t, {
      publicOriginIsListener: true,
      overrides: { 'ui.enabled': true, ...mail.overrides },
    });
    const realm = await h.createRealm();
    const owner = await h.createUser(realm, {
      email: OWNER,
      password: 'forgotten-long-ago-1',
      emailVerified: true,
    });
    const operator = await apiCaller(h, realm, { email: 'support@example.com' });
    const asked = await operator.call('POST', `/users/${owner.id}/recovery-requests`, {
      reason: 'lost it all',
    });
    assert.equal(asked.status, 200, await asked.text());
    await deliverQueued(h);
    const link = linkIn(await mail.waitFor(OWNER));

    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);
    await page.goto(link);
    await page.getByRole('heading', { name: 'Set up your account again' }).waitFor();
    assert.equal(
      new URL(page.url()).searchParams.get('recovery_setup'),
      null,
      'the token leaves the address bar',
    );
    await page.getByLabel('New password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Save password' }).click();
    await page.getByRole('heading', { name: 'Password saved' }).waitFor();
    assert.deepEqual(errors, []);

    await page.goto(link);
    await page.getByLabel('New password').fill(`${NEW_PASSWORD}!`);
    await page.getByRole('button', { name: 'Save password' }).click();
    await page.getByRole('alert').filter({ hasText: 'This link is not valid any more' }).waitFor();

    // The new password signs in, and an authenticator app is asked for first.
    const tx = await startHeadless(h, realm.name, CLI_CLIENT_ID, CLI_REDIRECT, { scope: 'openid' });
    await tx.step('identify', { identifier: OWNER });
    assert.deepEqual(actionTypes((await tx.step('password', { password: NEW_PASSWORD })).body), [
      'enroll_totp',
    ]);
  });
});
