// The first hour on a branded realm, in a real Chromium, in English and German (issue 26, done
// when): a new person registers and confirms the address, signs in with a magic link opened in a
// new tab as a mail client opens it, resets the password and lands signed in, and every page shows
// the realm's name, its uploaded logo and its colour, under the login UI's strict policy.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { de } from '../../../ui/lib/messages.de.ts';
import { en, type MessageKey } from '../../../ui/lib/messages.en.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import { startHarness } from '../../harness/harness.ts';
import { accountPage, accountShown, collectErrors, TINY_PNG } from '../../harness/login-ui-kit.ts';
import { codeIn, deliverQueued, linkIn, startMailSink } from '../../harness/mail-kit.ts';

const COLOUR = '#0a7d4f';
const COLOUR_RGB = 'rgb(10, 125, 79)';
const EMAIL = 'new.person@example.com';

/** The brand as the page shows it: the name, whether the logo loaded, the primary button's colour. */
async function brandShown(page: Page, name: string): Promise<void> {
  await page.locator('.brand-name').filter({ hasText: name }).waitFor();
  await page.waitForFunction(() => {
    const img = (
      globalThis as unknown as {
        document: { querySelector(s: string): { complete: boolean; naturalWidth: number } | null };
      }
    ).document.querySelector('img.brand-logo');
    return img?.complete === true && img.naturalWidth > 0;
  });
  const accent = await page.evaluate(() => {
    const g = globalThis as unknown as {
      document: { documentElement: unknown };
      getComputedStyle(e: unknown): { getPropertyValue(p: string): string };
    };
    return g.getComputedStyle(g.document.documentElement).getPropertyValue('--accent').trim();
  });
  assert.equal(accent, COLOUR);
  const button = page.locator('button.primary').first();
  if ((await button.count()) > 0)
    assert.equal(
      await button.evaluate(
        (b) =>
          (
            globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }
          ).getComputedStyle(b).backgroundColor,
      ),
      COLOUR_RGB,
    );
}

async function firstHour(t: TestContext, locale: 'en' | 'de') {
  const text = (key: MessageKey) => (locale === 'de' ? (de[key] ?? en[key]) : en[key]);
  const brand = `Acme Shop ${locale.toUpperCase()}`;
  const mail = await startMailSink(t);
  const h = await startHarness(t, {
    publicOriginIsListener: true,
    overrides: { 'ui.enabled': true, ...mail.overrides },
  });
  const realm = await h.createRealm();
  await h.setPolicy(realm, {
    registration: { mode: 'open', require_email_verification: true },
    login: { password: true, magic_link: true, identifiers: ['email', 'username'] },
    interaction: { display_name: brand, primary_color: COLOUR, support_contact: 'help@acme.example' },
  });
  const admin = await apiCaller(h, realm);
  const logo = await admin.call('PUT', '/branding/logo', { image: TINY_PNG.toString('base64') });
  assert.equal(logo.status, 200);
  let mails = 0;
  const nextMail = async () => {
    await deliverQueued(h);
    const m = await mail.waitFor(EMAIL, ++mails, brand);
    assert.match(m.text, new RegExp(`-- \\n${brand}\\n$`), 'the mail is signed with the brand name');
    return m;
  };
  const browser = await launchBrowser(t);
  const seen: string[][] = [];
  const open = async (context: Awaited<ReturnType<typeof browser.newContext>>) => {
    const page = await context.newPage();
    seen.push(collectErrors(page));
    return page;
  };

  // 1. Registration with the emailed confirmation code; the account page shows the new person.
  const registering = await open(await browser.newContext());
  await registering.goto(accountPage(h, realm.name, `&register&ui_locales=${locale}`));
  await registering.getByRole('heading', { name: text('register.title'), level: 1 }).waitFor();
  await brandShown(registering, brand);
  await registering.getByRole('link', { name: text('brand.contact') }).waitFor();
  await registering.getByLabel(text('register.email')).fill(EMAIL);
  await registering.getByLabel(text('register.name')).fill('New Person');
  await registering.getByLabel(text('register.password'), { exact: true }).fill('the first long password');
  await registering.getByRole('button', { name: text('register.submit') }).click();
  await registering.getByRole('button', { name: text('verify.email_send') }).click();
  // The code field shows once the send was answered, so the mail is queued by then.
  await registering.getByLabel(text('otp.code')).waitFor();
  await registering.getByLabel(text('otp.code')).fill(codeIn(await nextMail()));
  await registering.getByRole('button', { name: text('otp.submit') }).click();
  assert.match((await accountShown(registering)).who, /new\.person@example\.com/);
  await brandShown(registering, brand);

  // 2. Another browser session: a magic link, opened in a new tab as a mail client opens it.
  const linking = await browser.newContext();
  const asking = await open(linking);
  await asking.goto(accountPage(h, realm.name, `&ui_locales=${locale}`));
  await brandShown(asking, brand);
  await asking.getByLabel(text('password.identifier')).fill(EMAIL);
  await asking.getByRole('button', { name: text('password.other_methods') }).click();
  await asking.getByRole('button', { name: text('alt.magic_link') }).click();
  await asking.getByRole('button', { name: text('magic.send'), exact: true }).click();
  await asking.getByText(text('magic.sent')).waitFor();
  const link = linkIn(await nextMail());
  const mailTab = await open(linking);
  await mailTab.goto(link);
  assert.match((await accountShown(mailTab)).who, /new\.person@example\.com/);
  assert.equal(await mailTab.locator('html').getAttribute('lang'), locale);
  await brandShown(mailTab, brand);

  // 3. A third browser session: the forgotten password, reset by mailed code, lands signed in.
  const resetting = await open(await browser.newContext());
  await resetting.goto(accountPage(h, realm.name, `&ui_locales=${locale}`));
  await resetting.getByLabel(text('password.identifier')).fill(EMAIL);
  await resetting.getByRole('button', { name: text('reset.forgot') }).click();
  await resetting.getByRole('heading', { name: text('reset.title'), level: 1 }).waitFor();
  await brandShown(resetting, brand);
  await resetting.getByLabel(text('otp.code')).fill(codeIn(await nextMail()));
  await resetting.getByRole('button', { name: text('otp.submit') }).click();
  await resetting.getByLabel(text('update_password.password')).fill('a second and better password');
  await resetting.getByRole('button', { name: text('update_password.submit') }).click();
  assert.match((await accountShown(resetting)).who, /new\.person@example\.com/);
  assert.equal(await resetting.title(), `${text('acct.title')} · ${brand}`);
  // No page error and no Content-Security-Policy violation on any page.
  assert.deepEqual(seen.flat(), []);
}

describe('built-in login UI › the first hour on a branded realm', { skip: NO_BROWSER ?? false }, () => {
  test('case=register, magic link in a new tab, reset, signed in, branded/locale=en', (t) =>
    firstHour(t, 'en'));
  test('case=register, magic link in a new tab, reset, signed in, branded/locale=de', (t) =>
    firstHour(t, 'de'));
});
