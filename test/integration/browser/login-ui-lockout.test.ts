// A spent sign-in budget in a real Chromium (docs/security.md, "Abuse budgets"): the page states
// the real wait from the answer's Retry-After, in English and German, not "wait a moment"; where
// the realm mails sign-in codes, it offers that way out and the code signs in (docs/signin.md,
// "A spent password budget").
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { de } from '../../../ui/lib/messages.de.ts';
import { en, type MessageKey } from '../../../ui/lib/messages.en.ts';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import { startHarness } from '../../harness/harness.ts';
import { accountPage, accountShown, collectErrors, shopClient } from '../../harness/login-ui-kit.ts';
import { codeIn, deliverQueued, startMailSink } from '../../harness/mail-kit.ts';
import { authorizeQuery, movableClock } from '../../harness/signin-kit.ts';

const WINDOW_MS = 15 * 60_000;

const SEEN = {
  en: {
    identifier: 'Email or username',
    password: 'Password',
    submit: 'Sign in',
    wait: 'Too many attempts. Try again in 11 minutes.',
  },
  de: {
    identifier: 'E-Mail oder Benutzername',
    password: 'Passwort',
    submit: 'Anmelden',
    wait: 'Zu viele Versuche. Versuchen Sie es in 11 Minuten erneut.',
  },
} as const;

/**
 * A harness serving the UI on a stopped clock four minutes into a budget window (so the window has
 * eleven minutes left), with an account budget of two failures.
 */
function budgetHarness(t: TestContext, overrides: Record<string, unknown> = {}) {
  const clock = movableClock(Math.floor(Date.now() / WINDOW_MS) * WINDOW_MS + 4 * 60_000);
  return startHarness(t, {
    clock,
    publicOriginIsListener: true,
    overrides: {
      'ui.enabled': true,
      ...overrides,
      'security.budgets.account_failures': 2,
      'security.budgets.account_window': '15m',
    },
  });
}

/**
 * Two wrong guesses, then the right password; each answer is awaited (and the screen drawn again)
 * before the next is typed. The statuses of the three answers.
 */
async function twoWrongThenRight(page: Page, labels: { password: string; submit: string }) {
  const statuses: number[] = [];
  for (const guess of ['wrong guess one', 'wrong guess two', 'the first password']) {
    await page.getByLabel(labels.password, { exact: true }).fill(guess);
    const answered = page.waitForResponse(
      (r) => r.request().method() === 'POST' && r.url().endsWith('/password'),
    );
    await page.getByRole('button', { name: labels.submit, exact: true }).click();
    statuses.push((await answered).status());
    // The screen drawn again after the answer has an empty password field.
    await page.waitForFunction(() => {
      const field = (
        globalThis as unknown as { document: { querySelector(s: string): { value: string } | null } }
      ).document.querySelector('input[type=password]');
      return field !== null && field.value === '';
    });
  }
  return statuses;
}

async function lockedOut(t: TestContext, locale: 'en' | 'de') {
  const seen = SEEN[locale];
  const h = await budgetHarness(t);
  const realm = await h.createRealm();
  const callback = await shopClient(h, realm);
  await h.createUser(realm, { email: 'alice@example.com', password: 'the first password' });
  const browser = await launchBrowser(t);
  const page = await (await browser.newContext()).newPage();
  const errors = collectErrors(page);
  await page.goto(
    `${h.publicUrl}/realms/${realm.name}/oauth/authorize?${authorizeQuery('shop', callback, { ui_locales: locale }).params}`,
  );
  await page.getByLabel(seen.identifier).fill('alice@example.com');
  const statuses = await twoWrongThenRight(page, seen);
  assert.deepEqual(statuses, [200, 200, 429], 'two failures spend the budget, the third is refused');
  await page
    .getByRole('alert')
    .filter({ hasText: seen.wait })
    .waitFor({ timeout: 10_000 })
    .catch(async () => assert.fail(`shown: ${await page.getByRole('alert').allTextContents()}`));
  assert.equal(await page.getByText(/Wait a moment|Warten Sie einen Moment/).count(), 0);
  assert.deepEqual(
    errors.filter((e) => !/status of 429/.test(e)),
    [],
  );
}

async function wayOutByMail(t: TestContext, locale: 'en' | 'de') {
  const text = (key: MessageKey) => (locale === 'de' ? (de[key] ?? en[key]) : en[key]);
  const mail = await startMailSink(t);
  const h = await budgetHarness(t, mail.overrides);
  const realm = await h.createRealm();
  await h.setPolicy(realm, {
    login: { password: true, email_otp: true, identifiers: ['email', 'username'] },
  });
  await h.createUser(realm, { email: 'alice@example.com', password: 'the first password' });
  const page = await (await (await launchBrowser(t)).newContext()).newPage();
  const errors = collectErrors(page);
  await page.goto(accountPage(h, realm.name, `&ui_locales=${locale}`));
  await page.getByLabel(text('password.identifier')).fill('alice@example.com');
  const statuses = await twoWrongThenRight(page, {
    password: text('password.password'),
    submit: text('password.submit'),
  });
  assert.deepEqual(statuses, [200, 200, 429]);
  await page.getByRole('alert').filter({ hasText: SEEN[locale].wait }).waitFor();
  await page.getByText(text('lockout.way_out')).waitFor();
  await page
    .getByRole('button', { name: text('alt.email_otp'), exact: true })
    .first()
    .click();
  await page.getByRole('button', { name: text('otp.email_send'), exact: true }).click();
  await page.getByText(text('otp.email_sent')).waitFor();
  await deliverQueued(h);
  const code = codeIn(await mail.waitFor('alice@example.com', 1, realm.display_name));
  await page.getByLabel(text('otp.code'), { exact: true }).fill(code);
  await page.getByRole('button', { name: text('otp.submit'), exact: true }).click();
  assert.match((await accountShown(page)).who, /alice@example\.com/);
  assert.deepEqual(
    errors.filter((e) => !/status of 429/.test(e)),
    [],
  );
}

describe('built-in login UI › a spent sign-in budget', { skip: NO_BROWSER ?? false }, () => {
  test('case=the wait of Retry-After is stated/locale=en', (t) => lockedOut(t, 'en'));
  test('case=the wait of Retry-After is stated/locale=de', (t) => lockedOut(t, 'de'));
  test('case=an emailed code is the way out/locale=en', (t) => wayOutByMail(t, 'en'));
  test('case=an emailed code is the way out/locale=de', (t) => wayOutByMail(t, 'de'));
});
