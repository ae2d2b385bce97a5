// The built-in login UI and account page in a real Chromium (docs/login-ui.md): the first
// administrator signs in and enrolls TOTP, comes back with TOTP, then with a recovery code; and
// the UI speaks German when asked to.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import {
  ADMIN_EMAIL,
  accountPage,
  accountShown,
  collectErrors,
  confirmCodesSaved,
  currentCode,
  enrollTotp,
  enterPassword,
  realmWithAdministrator,
  shopClient,
  startUiHarness,
} from '../../harness/login-ui-kit.ts';
import { authorizeQuery } from '../../harness/signin-kit.ts';

describe('built-in login UI in a browser', { skip: NO_BROWSER ?? false }, () => {
  test('case=first administrator enrolls TOTP, then signs in again with TOTP and with a recovery code', async (t) => {
    const h = await startUiHarness(t);
    const realm = await realmWithAdministrator(h);
    const browser = await launchBrowser(t);

    // First sign-in: the account page sends the browser through the authorization endpoint to the
    // login UI, which the realm uses because it names no login UI of its own.
    const first = await (await browser.newContext()).newPage();
    const errors = collectErrors(first);
    await first.goto(accountPage(h, realm));
    await first.waitForURL(/\/ui\/login\/\?/);
    const loginUrl = new URL(first.url());
    assert.equal(loginUrl.searchParams.get('realm'), realm);
    assert.ok(loginUrl.searchParams.get('transaction_id'));
    await enterPassword(first);
    const { secret, codes } = await enrollTotp(h, first);
    assert.equal(codes.length, 10, 'ten recovery codes are shown once');
    const next = first.getByRole('button', { name: 'Continue' });
    assert.equal(await next.isDisabled(), true, 'going on needs the confirmation first');
    await confirmCodesSaved(first);
    await first.waitForURL(/\/ui\/account\/\?realm=/);
    const shown = await accountShown(first);
    assert.match(shown.who, new RegExp(ADMIN_EMAIL));
    assert.equal(shown.sessions, 1);

    // Returning: another browser profile signs in with password and the authenticator code.
    h.clock.advance(30_000);
    const second = await (await browser.newContext()).newPage();
    errors.push(...collectErrors(second));
    await second.goto(accountPage(h, realm));
    await enterPassword(second);
    await second.getByLabel('Authenticator code').fill(currentCode(h, secret));
    await second.getByRole('button', { name: 'Verify' }).click();
    const back = await accountShown(second);
    assert.match(back.who, new RegExp(ADMIN_EMAIL));
    assert.equal(back.sessions, 2, 'both browsers are signed in');

    // A wrong code is answered in plain words, and a recovery code gets the administrator in.
    h.clock.advance(30_000);
    const third = await (await browser.newContext()).newPage();
    errors.push(...collectErrors(third));
    await third.goto(accountPage(h, realm));
    await enterPassword(third);
    await third.getByRole('button', { name: 'Use a recovery code instead' }).click();
    await third.getByLabel('Recovery code').fill('AAAA-AAAA-AAAA');
    await third.getByRole('button', { name: 'Verify' }).click();
    await third.getByRole('alert').filter({ hasText: 'That recovery code is not correct' }).waitFor();
    await third.getByLabel('Recovery code').fill(codes[3] ?? '');
    await third.getByRole('button', { name: 'Verify' }).click();
    const recovered = await accountShown(third);
    assert.match(recovered.who, new RegExp(ADMIN_EMAIL));

    // Ending the other sessions from the account page.
    await third.getByRole('button', { name: 'Sign out everywhere' }).click();
    await third.getByText('You are signed out everywhere.').waitFor();
    assert.deepEqual(errors, [], 'no script, policy or network errors');
  });

  test('case=a required password update and consent, then back to the application; cancelling', async (t) => {
    const h = await startUiHarness(t);
    const realm = await h.createRealm();
    const callback = await shopClient(h, realm, { consentMode: 'required' });
    const user = await h.createUser(realm, {
      email: 'alice@example.com',
      password: 'the first password',
      displayName: 'Alice',
      requiredActions: ['update_password'],
    });
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);
    const authorizeUrl = () =>
      `${h.publicUrl}/realms/${realm.name}/oauth/authorize?${authorizeQuery('shop', callback, { scope: 'openid profile email' }).params}`;

    await page.goto(authorizeUrl());
    await enterPassword(page, 'alice@example.com', 'the first password');
    await page.getByLabel('New password').fill('a second and better password');
    await page.getByRole('button', { name: 'Save password' }).click();
    await page.getByRole('heading', { name: 'Allow access' }).waitFor();
    assert.ok(await page.getByText('The Shop asks for access to:').isVisible());
    assert.equal(
      await page.locator('[data-third-party]').count(),
      0,
      "the realm's own client gets no warning",
    );
    await page.getByLabel('Your email address').uncheck();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(/\/callback\?/);
    const back = new URL(page.url());
    assert.ok(back.searchParams.get('code'), 'an authorization code for the client');
    assert.equal(back.searchParams.get('state'), 'st-123');
    const consent = await h.ctx.db.query<{ scopes: string[] }>(
      'select scopes from consents where realm_id = $1 and user_id = $2',
      [realm.id, user.id],
    );
    assert.deepEqual([...(consent.rows[0]?.scopes ?? [])].sort(), ['openid', 'profile']);

    // A registered (third-party) client: the consent screen says it is not the realm owner's.
    await h.setPolicy(realm, { client_registration: { enabled: true } });
    const admin = await apiCaller(h, realm);
    const iat = (await (await admin.call('POST', '/initial-access-tokens', {})).json()) as { token: string };
    const registered = await h.get(`/realms/${realm.name}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${iat.token}` },
      body: JSON.stringify({
        redirect_uris: [callback],
        client_name: 'Partner Tool',
        token_endpoint_auth_method: 'none',
        // A loopback http redirect URI is a native app's (RFC 8252).
        application_type: 'native',
        scope: 'openid profile',
      }),
    });
    const partner = (await registered.json()) as { client_id: string };
    assert.equal(registered.status, 201, JSON.stringify(partner));
    await page.goto(
      `${h.publicUrl}/realms/${realm.name}/oauth/authorize?${authorizeQuery(partner.client_id, callback, { scope: 'openid profile' }).params}`,
    );
    await page.getByRole('heading', { name: 'Allow access' }).waitFor();
    const warning = page.locator('[data-third-party]');
    await warning.waitFor();
    assert.match(
      (await warning.textContent()) ?? '',
      /^Partner Tool is not run by the operator of this sign-in service/,
    );
    assert.equal(await warning.getAttribute('role'), 'alert');
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(/\/callback\?/);
    assert.ok(
      new URL(page.url()).searchParams.get('code'),
      'consent given, the registered client gets a code',
    );

    // A new sign-in in a fresh profile, cancelled: the client hears access_denied.
    const other = await (await browser.newContext()).newPage();
    errors.push(...collectErrors(other));
    await other.goto(authorizeUrl());
    await other.getByRole('button', { name: 'Cancel sign-in' }).click();
    await other.waitForURL(/\/callback\?/);
    assert.equal(new URL(other.url()).searchParams.get('error'), 'access_denied');
    // A sign-in left open past its lifetime says so in plain words.
    const late = await (await browser.newContext()).newPage();
    errors.push(...collectErrors(late));
    await late.goto(authorizeUrl());
    await late.getByLabel('Password', { exact: true }).waitFor();
    h.clock.advance(h.ctx.config.tokens.transactionTtlMs + 1000);
    await enterPassword(late, 'alice@example.com', 'a second and better password');
    await late.getByRole('alert').filter({ hasText: 'This sign-in took too long and has expired' }).waitFor();

    // The callback page of this test does not exist and the expired step answers 409: those are
    // the only failed loads allowed.
    assert.deepEqual(
      errors.filter((e) => !/status of (404|409)/.test(e)),
      [],
    );
  });

  test('case=ui_locales=de shows the login UI in German', async (t) => {
    const h = await startUiHarness(t);
    const realm = await realmWithAdministrator(h);
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);
    await page.goto(accountPage(h, realm, '&ui_locales=de'));
    await page.waitForURL(/\/ui\/login\/\?/);
    await page.getByRole('heading', { name: 'Passwort eingeben' }).waitFor();
    assert.equal(await page.getAttribute('html', 'lang'), 'de');
    assert.ok(await page.getByLabel('E-Mail oder Benutzername').isVisible());
    await page.getByLabel('E-Mail oder Benutzername').fill(ADMIN_EMAIL);
    await page.getByLabel('Passwort', { exact: true }).fill('not the password');
    await page.getByRole('button', { name: 'Anmelden' }).click();
    await page.getByRole('alert').filter({ hasText: 'Passwort ist nicht korrekt' }).waitFor();
    assert.deepEqual(errors, []);
  });
});
