// The password rule is on the page before anything is sent (issue 26): the register screen writes
// it under the password field, tied to it for screen readers, and a password the realm's
// password.min_strength refuses (password123) is answered in words on the same screen, in
// English and German.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import { accountPage, collectErrors, startUiHarness } from '../../harness/login-ui-kit.ts';

const SEEN = {
  en: {
    email: 'Email',
    password: 'Password',
    submit: 'Create account',
    rule: /^At least 8 characters\. Common passwords, names and keyboard patterns are refused/,
    refused: /too easy to guess/,
  },
  de: {
    email: 'E-Mail',
    password: 'Passwort',
    submit: 'Konto erstellen',
    rule: /^Mindestens 8 Zeichen\. Häufige Passwörter, Namen und Tastaturmuster werden abgelehnt/,
    refused: /zu leicht zu erraten/,
  },
} as const;

async function ruleShownThenWeakRefused(t: TestContext, locale: 'en' | 'de') {
  const seen = SEEN[locale];
  const h = await startUiHarness(t);
  const realm = await h.createRealm();
  await h.setPolicy(realm, { registration: { mode: 'open' } });
  const browser = await launchBrowser(t);
  const page = await (await browser.newContext()).newPage();
  const errors = collectErrors(page);
  await page.goto(accountPage(h, realm.name, `&ui_locales=${locale}&register`));
  const password = page.locator('input[autocomplete="new-password"]');
  await password.waitFor();
  const ruleId = await password.getAttribute('aria-describedby');
  assert.ok(ruleId, 'the field names its rule');
  assert.match((await page.locator(`[id="${ruleId}"]`).textContent()) ?? '', seen.rule);
  await page.getByLabel(seen.email, { exact: true }).fill('new@example.com');
  await password.fill('password123');
  await page.getByRole('button', { name: seen.submit, exact: true }).click();
  await page.getByRole('alert').filter({ hasText: seen.refused }).waitFor();
  assert.equal(await password.isVisible(), true, 'the same screen, to choose another');
  assert.deepEqual(
    errors.filter((e) => !/status of 422/.test(e)),
    [],
  );
}

describe('built-in login UI › the password rule', { skip: NO_BROWSER ?? false }, () => {
  test('case=shown under the field, password123 refused in words/locale=en', (t) =>
    ruleShownThenWeakRefused(t, 'en'));
  test('case=shown under the field, password123 refused in words/locale=de', (t) =>
    ruleShownThenWeakRefused(t, 'de'));
});
