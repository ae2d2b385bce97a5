// Passkeys in the built-in login UI with Chromium's virtual authenticator (CDP WebAuthn domain):
// a person enrolls a passkey while signing in, then signs in with it alone; the realm's passkey
// policy shows up as plain-words refusals (a blocked model at registration and at sign-in), and
// the options ask for user verification and credProtect as the policy says.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import {
  collectErrors,
  confirmCodesSaved,
  enterPassword,
  shopClient,
  startUiHarness,
  withVirtualAuthenticator,
} from '../../harness/login-ui-kit.ts';
import { authorizeQuery } from '../../harness/signin-kit.ts';

/** The AAGUID Chromium's virtual authenticator reports. */
const CHROMIUM_AAGUID = '01020304-0506-0708-0102-030405060708';

async function passkeyRealm(t: TestContext, webauthn: Record<string, unknown> = {}) {
  const h = await startUiHarness(t);
  // WebAuthn needs a domain as rp id: the browser talks to localhost, not 127.0.0.1.
  const origin = h.publicUrl.replace('127.0.0.1', 'localhost');
  h.ctx.config.server.publicOrigin = origin;
  const realm = await h.createRealm();
  await h.setPolicy(realm, { mfa: { requirement: 'required' }, login: { passkeys: true }, webauthn });
  const callback = await shopClient(h, realm, {}, origin);
  await h.createUser(realm, { email: 'alice@example.com', password: 'the first password' });
  const authorizeUrl = () =>
    `${origin}/realms/${realm.name}/oauth/authorize?${authorizeQuery('shop', callback, { prompt: 'login' }).params}`;
  return { h, realm, authorizeUrl };
}

/** Password first; then the enrollment offered by required MFA, answered with a passkey. */
async function enrollPasskey(page: Page) {
  await enterPassword(page, 'alice@example.com', 'the first password');
  await page.getByRole('button', { name: 'Create a passkey instead' }).click();
  await page.getByLabel('Name for this passkey').fill('Laptop');
  await page.getByRole('button', { name: 'Create a passkey' }).click();
}

describe('built-in login UI › passkeys', { skip: NO_BROWSER ?? false }, () => {
  test('case=enroll a passkey while signing in, then sign in with it alone', async (t) => {
    const { h, realm, authorizeUrl } = await passkeyRealm(t);
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);
    await withVirtualAuthenticator(page);
    const optionsSeen: Record<string, unknown>[] = [];
    page.on('response', async (r) => {
      if (r.url().endsWith('/webauthn/registration-options')) optionsSeen.push((await r.json()).webauthn);
    });

    await page.goto(authorizeUrl());
    await enrollPasskey(page);
    await page.locator('ol.codes').waitFor();
    await confirmCodesSaved(page);
    await page.waitForURL(/\/callback\?/);
    const [row] = (
      await h.ctx.db.query<{ name: string; aaguid: string; user_verified: boolean }>(
        'select name, aaguid, user_verified from webauthn_credentials where realm_id = $1',
        [realm.id],
      )
    ).rows;
    assert.deepEqual(row, { name: 'Laptop', aaguid: CHROMIUM_AAGUID, user_verified: true });
    const sent = optionsSeen[0] as { authenticatorSelection: { residentKey: string } };
    assert.equal(sent.authenticatorSelection.residentKey, 'required');

    // The same browser again: no password, the passkey alone. Chromium's virtual authenticator
    // answers the sign-in page's autofill (conditional mediation) request by itself.
    await page.goto(authorizeUrl());
    await page.waitForURL(/\/callback\?/);
    assert.ok(new URL(page.url()).searchParams.get('code'), JSON.stringify(errors));
    const session = await h.ctx.db.query<{ amr: string[]; acr: string }>(
      'select amr, acr from sessions where realm_id = $1 order by created_at desc limit 1',
      [realm.id],
    );
    assert.deepEqual(session.rows[0], { amr: ['hwk'], acr: 'phishing_resistant' });

    // The realm then blocks this model: the passkey no longer signs in (case rule 2).
    await h.setPolicy(realm, { webauthn: { blocked_aaguids: [CHROMIUM_AAGUID] } });
    await page.goto(authorizeUrl());
    await page.getByRole('alert').filter({ hasText: 'The passkey was not accepted' }).waitFor();
    // The button asks again, and is refused again.
    await page.getByRole('button', { name: 'Sign in with a passkey instead' }).click();
    await page.getByRole('button', { name: 'Use a passkey' }).click();
    await page.getByRole('alert').filter({ hasText: 'The passkey was not accepted' }).waitFor();
    const failed = await h.ctx.db.query<{ reason: string }>(
      `select data ->> 'reason' as reason from audit_events where realm_id = $1 and type = 'mfa.webauthn.failed'`,
      [realm.id],
    );
    assert.deepEqual(
      failed.rows.map((r) => r.reason),
      ['authenticator_not_allowed', 'authenticator_not_allowed'],
    );
    assert.deepEqual(
      errors.filter((e) => !/status of 404/.test(e)),
      [],
    );
  });

  test('case=a blocked model is refused at registration; UV and credProtect are requested', async (t) => {
    const { authorizeUrl } = await passkeyRealm(t, {
      blocked_aaguids: [CHROMIUM_AAGUID],
      user_verification: 'required',
      credential_protection: 'userVerificationOptionalWithCredentialIDList',
    });
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    await withVirtualAuthenticator(page);
    const optionsSeen: Record<string, unknown>[] = [];
    page.on('response', async (r) => {
      if (r.url().endsWith('/webauthn/registration-options')) optionsSeen.push((await r.json()).webauthn);
    });
    await page.goto(authorizeUrl());
    await enrollPasskey(page);
    await page
      .getByRole('alert')
      .filter({ hasText: 'This kind of passkey or security key is not allowed' })
      .waitFor();
    const sent = optionsSeen[0] as {
      authenticatorSelection: { userVerification: string };
      extensions: Record<string, unknown>;
    };
    assert.equal(sent.authenticatorSelection.userVerification, 'required');
    assert.equal(sent.extensions.credentialProtectionPolicy, 'userVerificationOptionalWithCredentialIDList');
    assert.equal(sent.extensions.credProps, true);
  });
});
