// A magic link opened the way a mail client opens it: in a new tab of the same browser, where the
// sign-in must finish and the account page must show the person signed in (in the language the
// sign-in was asked in), while the first tab says where the sign-in went; and in another browser
// profile, which is refused with words about the link. English and German.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { de } from '../../../ui/lib/messages.de.ts';
import { en, type MessageKey } from '../../../ui/lib/messages.en.ts';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import { startHarness } from '../../harness/harness.ts';
import { accountPage, accountShown, collectErrors } from '../../harness/login-ui-kit.ts';
import { deliverQueued, linkIn, startMailSink } from '../../harness/mail-kit.ts';

const FINISHED_ELSEWHERE: Record<string, RegExp> = {
  en: /You are signed in: the link from your email finished this sign-in in another tab/,
  de: /Sie sind angemeldet: Der Link aus Ihrer E-Mail hat diese Anmeldung in einem anderen Tab abgeschlossen/,
};
const OTHER_BROWSER: Record<string, RegExp> = {
  en: /This sign-in link works only in the browser where you asked for it/,
  de: /Dieser Anmeldelink funktioniert nur in dem Browser, in dem Sie ihn angefordert haben/,
};

async function magicLinkInTabs(t: TestContext, locale: 'en' | 'de') {
  const text = (key: MessageKey) => (locale === 'de' ? (de[key] ?? en[key]) : en[key]);
  const mail = await startMailSink(t);
  const h = await startHarness(t, {
    publicOriginIsListener: true,
    overrides: { 'ui.enabled': true, ...mail.overrides },
  });
  const realm = await h.createRealm();
  await h.setPolicy(realm, {
    login: { password: true, magic_link: true, identifiers: ['email', 'username'] },
  });
  await h.createUser(realm, { email: 'alice@example.com', password: 'the first password' });
  const browser = await launchBrowser(t);
  const context = await browser.newContext();
  const first = await context.newPage();
  const errors = collectErrors(first);

  await first.goto(accountPage(h, realm.name, `&ui_locales=${locale}`));
  await first.getByLabel(text('password.identifier')).fill('alice@example.com');
  await first.getByRole('button', { name: text('password.other_methods') }).click();
  await first.getByRole('button', { name: text('alt.magic_link') }).click();
  await first.getByRole('button', { name: text('magic.send'), exact: true }).click();
  await first.getByText(text('magic.sent')).waitFor();
  await deliverQueued(h);
  const link = linkIn(await mail.waitFor('alice@example.com', 1, realm.display_name));

  // Another browser profile has no part in this sign-in: refused, saying why.
  const stranger = await (await browser.newContext()).newPage();
  await stranger.goto(link);
  await stranger.getByRole('alert').filter({ hasText: OTHER_BROWSER[locale] }).waitFor();

  // A new tab of the same browser, as a mail client opens the link: signed in on the account page.
  const second = await context.newPage();
  const secondErrors = collectErrors(second);
  await second.goto(link);
  const shown = await accountShown(second);
  assert.match(shown.who, /alice@example\.com/);
  assert.equal(await second.getByRole('heading', { level: 1 }).textContent(), text('acct.title'));
  assert.equal(await second.locator('html').getAttribute('lang'), locale);
  assert.equal(await second.getByText(text('acct.failed').split(':')[0] ?? '').count(), 0);

  // The first tab does not blame the browser: it says the sign-in finished in the other tab.
  await first.getByRole('status').filter({ hasText: FINISHED_ELSEWHERE[locale] }).waitFor();
  assert.equal(await first.getByText(text('code.forbidden')).count(), 0);
  // Its buttons are gone with the sign-in, so nothing there can fail any more.
  assert.equal(await first.getByRole('button', { name: text('magic.resend') }).count(), 0);
  assert.deepEqual(errors, []);
  assert.deepEqual(secondErrors, []);
}

describe('built-in login UI › a magic link opened from a mail client', { skip: NO_BROWSER ?? false }, () => {
  test('case=new tab of the same browser signs in, another browser is refused/locale=en', (t) =>
    magicLinkInTabs(t, 'en'));
  test('case=new tab of the same browser signs in, another browser is refused/locale=de', (t) =>
    magicLinkInTabs(t, 'de'));
});
