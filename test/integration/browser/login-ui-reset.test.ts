// The forgotten-password screens in a real Chromium, in English and German: titled as a reset (not
// as the password prompt), no word of an administrator after a self-service reset, the current
// password refused in plain words, then a new one signs in.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { de } from '../../../ui/lib/messages.de.ts';
import { en, type MessageKey } from '../../../ui/lib/messages.en.ts';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import { startHarness } from '../../harness/harness.ts';
import { collectErrors, shopClient } from '../../harness/login-ui-kit.ts';
import { codeIn, deliverQueued, startMailSink } from '../../harness/mail-kit.ts';
import { authorizeQuery } from '../../harness/signin-kit.ts';

const SEEN = {
  en: {
    codeTitle: 'Reset your password',
    newTitle: 'Choose a new password',
    reused: 'This password was used before.',
    passwordTitle: 'Enter your password',
    administrator: 'administrator',
  },
  de: {
    codeTitle: 'Passwort zurücksetzen',
    newTitle: 'Neues Passwort wählen',
    reused: 'Dieses Passwort wurde schon verwendet.',
    passwordTitle: 'Passwort eingeben',
    administrator: 'Administrator',
  },
} as const;

async function resetInBrowser(t: TestContext, locale: 'en' | 'de') {
  const text = (key: MessageKey) => (locale === 'de' ? (de[key] ?? en[key]) : en[key]);
  const seen = SEEN[locale];
  const mail = await startMailSink(t);
  const h = await startHarness(t, {
    publicOriginIsListener: true,
    overrides: { 'ui.enabled': true, ...mail.overrides },
  });
  const realm = await h.createRealm();
  const callback = await shopClient(h, realm);
  await h.createUser(realm, { email: 'alice@example.com', password: 'the first password' });
  const browser = await launchBrowser(t);
  const page = await (await browser.newContext()).newPage();
  const errors = collectErrors(page);
  await page.goto(
    `${h.publicUrl}/realms/${realm.name}/oauth/authorize?${authorizeQuery('shop', callback, { ui_locales: locale }).params}`,
  );
  await page.getByLabel(text('password.identifier')).fill('alice@example.com');
  await page.getByRole('button', { name: text('reset.forgot') }).click();

  await page.getByRole('heading', { name: seen.codeTitle, level: 1 }).waitFor();
  assert.equal(await page.getByRole('heading', { name: seen.passwordTitle }).count(), 0);
  await deliverQueued(h);
  const message = await mail.waitFor('alice@example.com', 1, realm.display_name);
  await page.getByLabel(text('otp.code')).fill(codeIn(message));
  await page.getByRole('button', { name: text('otp.submit') }).click();

  await page.getByRole('heading', { name: seen.newTitle, level: 1 }).waitFor();
  assert.equal(await page.getByText(seen.administrator).count(), 0, 'no administrator asked for this');
  await page.getByLabel(text('update_password.password')).fill('the first password');
  await page.getByRole('button', { name: text('update_password.submit') }).click();
  await page.getByRole('alert').filter({ hasText: seen.reused }).waitFor();
  await page.getByRole('heading', { name: seen.newTitle, level: 1 }).waitFor();

  await page.getByLabel(text('update_password.password')).fill('a second and better password');
  await page.getByRole('button', { name: text('update_password.submit') }).click();
  await page.waitForURL(/\/callback\?/);
  assert.ok(new URL(page.url()).searchParams.get('code'));
  // The refused password is a 422 the page explains, the callback a 404 (no application here).
  assert.deepEqual(
    errors.filter((e) => !/status of (404|422)/.test(e)),
    [],
  );
}

describe('built-in login UI › forgotten password', { skip: NO_BROWSER ?? false }, () => {
  test('case=reset screens, the current password refused, then signed in/locale=en', (t) =>
    resetInBrowser(t, 'en'));
  test('case=reset screens, the current password refused, then signed in/locale=de', (t) =>
    resetInBrowser(t, 'de'));
});
