// What the login UI and account page say and keep, in a real Chromium (issue 26): the username
// field stays beside the password after a wrong one (password managers pair the two), the TOTP key
// wraps between its groups only, the register screen's line under the title speaks of creating
// an account, the built-in account page is named in the page's language, and the account page
// keeps the language the sign-in was asked in. English and German.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import type { Harness } from '../../harness/harness.ts';
import {
  accountPage,
  accountShown,
  collectErrors,
  enterPassword,
  realmWithAdministrator,
  shopClient,
  startUiHarness,
} from '../../harness/login-ui-kit.ts';
import { authorizeQuery } from '../../harness/signin-kit.ts';

const callbackErrors = (errors: string[]) => errors.filter((e) => !/status of 404/.test(e));

async function realmWithShop(h: Harness) {
  const realm = await h.createRealm();
  await h.setPolicy(realm, { registration: { mode: 'open' } });
  const callback = await shopClient(h, realm);
  await h.createUser(realm, { email: 'alice@example.com', password: 'the first password' });
  const authorize = (extra: Record<string, string>) =>
    `${h.publicUrl}/realms/${realm.name}/oauth/authorize?${authorizeQuery('shop', callback, extra).params}`;
  return { realm, authorize };
}

const SUBTITLES = {
  en: {
    accountSignIn: 'Sign in to manage your account',
    accountRegister: 'Create an account, then manage it here',
    shopSignIn: 'Sign in to continue to The Shop',
    shopRegister: 'Create an account to continue to The Shop',
  },
  de: {
    accountSignIn: 'Melden Sie sich an, um Ihr Konto zu verwalten',
    accountRegister: 'Erstellen Sie ein Konto und verwalten Sie es dann hier',
    shopSignIn: 'Melden Sie sich an, um mit The Shop fortzufahren',
    shopRegister: 'Erstellen Sie ein Konto, um mit The Shop fortzufahren',
  },
} as const;

async function subtitles(t: TestContext, locale: 'en' | 'de') {
  const seen = SUBTITLES[locale];
  const h = await startUiHarness(t);
  const s = await realmWithShop(h);
  const browser = await launchBrowser(t);
  const page = await (await browser.newContext()).newPage();
  const subtitle = page.locator('p.subtitle');
  await page.goto(accountPage(h, s.realm.name, `&ui_locales=${locale}`));
  await subtitle.waitFor();
  assert.equal(await subtitle.textContent(), seen.accountSignIn);
  await page.goto(accountPage(h, s.realm.name, `&ui_locales=${locale}&register`));
  await page.locator('input[autocomplete="new-password"]').waitFor();
  assert.equal(await subtitle.textContent(), seen.accountRegister);
  await page.goto(s.authorize({ ui_locales: locale }));
  await page.locator('input[autocomplete="current-password"]').waitFor();
  assert.equal(await subtitle.textContent(), seen.shopSignIn);
  await page.goto(s.authorize({ ui_locales: locale, prompt: 'create' }));
  await page.locator('input[autocomplete="new-password"]').waitFor();
  assert.equal(await subtitle.textContent(), seen.shopRegister);
  // No English client name inside a German sentence, no sign-in wording on a registration.
  assert.equal(await page.getByText(/mit Account fortzufahren|Sign in to continue/).count(), 0);
}

describe('built-in login UI › wording and what stays', { skip: NO_BROWSER ?? false }, () => {
  test('case=after a wrong password the username field stays, read-only, filled/locale=en', async (t) => {
    const h = await startUiHarness(t);
    const s = await realmWithShop(h);
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);
    await page.goto(s.authorize({}));
    await enterPassword(page, 'alice@example.com', 'not the password');
    await page
      .getByRole('alert')
      .filter({ hasText: 'The email, username or password is not correct.' })
      .waitFor();
    const username = page.getByLabel('Email or username');
    assert.equal(await username.inputValue(), 'alice@example.com');
    assert.equal(await username.getAttribute('autocomplete'), 'username');
    assert.equal(await username.isEditable(), false, 'the transaction already knows who signs in');
    const password = page.getByLabel('Password', { exact: true });
    assert.equal(
      await password.evaluate((el) => el === el.ownerDocument.activeElement),
      true,
      'the focus is on the password, not the read-only field',
    );
    // Both fields are in one form, as password managers expect.
    assert.equal(
      await page.locator('form:has(input[autocomplete="username"]) input[type=password]').count(),
      1,
    );
    await password.fill('the first password');
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.waitForURL(/\/callback\?/);
    assert.deepEqual(callbackErrors(errors), []);
  });

  test('case=the TOTP key wraps between groups of four, never inside one/locale=en', async (t) => {
    const h = await startUiHarness(t);
    const realm = await realmWithAdministrator(h);
    const browser = await launchBrowser(t);
    const context = await browser.browser.newContext({ viewport: { width: 300, height: 900 } });
    const page = await context.newPage();
    await page.goto(accountPage(h, realm));
    await enterPassword(page);
    await page.getByRole('button', { name: 'Set up authenticator app' }).click();
    const secretBox = page.locator('[data-secret]');
    await secretBox.waitFor();
    const secret = (await secretBox.getAttribute('data-secret')) ?? '';
    const groups = await page
      .locator('[data-secret] code span')
      .evaluateAll((spans) =>
        spans.map((s) => ({ text: s.textContent ?? '', lines: s.getClientRects().length })),
      );
    assert.equal(groups.map((g) => g.text).join(''), secret, 'the groups spell the key');
    assert.ok(groups.every((g) => g.text.length <= 4));
    assert.deepEqual(
      groups.filter((g) => g.lines !== 1),
      [],
      'no group is split over two lines',
    );
    const tops = await page
      .locator('[data-secret] code span')
      .evaluateAll((spans) => new Set(spans.map((s) => Math.round(s.getBoundingClientRect().top))).size);
    assert.ok(tops > 1, 'the key does wrap on a narrow screen (between groups)');
  });

  test('case=the line under the title names what the person does/locale=en', (t) => subtitles(t, 'en'));
  test('case=the line under the title names what the person does/locale=de', (t) => subtitles(t, 'de'));

  test('case=the account page keeps the language the sign-in was asked in/locale=de', async (t) => {
    const h = await startUiHarness(t);
    const s = await realmWithShop(h);
    const browser = await launchBrowser(t);
    // The browser itself prefers English: only the sign-in asked for German.
    const page = await (await browser.browser.newContext({ locale: 'en-US' })).newPage();
    const errors = collectErrors(page);
    await page.goto(accountPage(h, s.realm.name, '&ui_locales=de'));
    await page.getByLabel('E-Mail oder Benutzername').fill('alice@example.com');
    await page.getByLabel('Passwort', { exact: true }).fill('the first password');
    await page.getByRole('button', { name: 'Anmelden', exact: true }).click();
    await accountShown(page);
    assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Ihr Konto');
    assert.equal(await page.locator('html').getAttribute('lang'), 'de');
    await page.getByRole('heading', { name: 'Ihre Sitzungen' }).waitFor();
    assert.equal(new URL(page.url()).searchParams.get('ui_locales'), 'de', 'a reload stays German');
    assert.deepEqual(errors, []);
  });
});
