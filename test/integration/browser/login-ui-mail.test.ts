// The built-in login UI's mail steps in a real Chromium, with mail received by a real SMTP server:
// registration with email verification, sign-in with an emailed code, a magic link, a forgotten
// password, and a deletion cancelled at sign-in.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import type { RealmRow } from '../../../src/realms/index.ts';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import type { Harness } from '../../harness/harness.ts';
import { startHarness } from '../../harness/harness.ts';
import { accountPage, accountShown, collectErrors, shopClient } from '../../harness/login-ui-kit.ts';
import { codeIn, deliverQueued, linkIn, type MailSink, startMailSink } from '../../harness/mail-kit.ts';
import { authorizeQuery, userRow } from '../../harness/signin-kit.ts';
import { smsCode, startSmsReceiver } from '../../harness/sms-kit.ts';

interface Setup {
  h: Harness;
  realm: RealmRow;
  mail: MailSink;
  authorizeUrl(extra?: Record<string, string>): string;
}

async function setup(t: TestContext, policy: Record<string, unknown>): Promise<Setup> {
  const mail = await startMailSink(t);
  const h = await startHarness(t, {
    publicOriginIsListener: true,
    overrides: { 'ui.enabled': true, ...mail.overrides },
  });
  const realm = await h.createRealm();
  await h.setPolicy(realm, policy);
  const callback = await shopClient(h, realm);
  return {
    h,
    realm,
    mail,
    authorizeUrl: (extra = {}) =>
      `${h.publicUrl}/realms/${realm.name}/oauth/authorize?${authorizeQuery('shop', callback, extra).params}`,
  };
}

/** Sends what the worker would, then the message to `to` number n. */
async function mailTo(s: Setup, to: string, n = 1) {
  await deliverQueued(s.h);
  return s.mail.waitFor(to, n, s.realm.display_name);
}

const allowed = (errors: string[]) => errors.filter((e) => !/status of (404|409)/.test(e));

describe('built-in login UI › mail steps in a browser', { skip: NO_BROWSER ?? false }, () => {
  test('case=register, confirm the emailed code, back at the application', async (t) => {
    const s = await setup(t, { registration: { mode: 'open', require_email_verification: true } });
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);
    await page.goto(s.authorizeUrl({ prompt: 'create' }));
    await page.getByRole('heading', { name: 'Create your account' }).waitFor();
    await page.getByLabel('Email').fill('new@example.com');
    await page.getByLabel('Name').fill('New Person');
    await page.getByLabel('Password').fill('a long new password');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.getByRole('heading', { name: 'Confirm your email address' }).waitFor();
    await page.getByRole('button', { name: 'Email me a confirmation code' }).click();
    await page.getByLabel('Code').waitFor();
    const mail = await mailTo(s, 'new@example.com');
    await page.getByLabel('Code').fill(codeIn(mail));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(/\/callback\?/);
    assert.ok(new URL(page.url()).searchParams.get('code'));
    assert.deepEqual(allowed(errors), []);
  });

  test('case=sign in with an emailed code; a wrong code is answered in plain words', async (t) => {
    const s = await setup(t, {
      login: { password: true, email_otp: true, identifiers: ['email', 'username'] },
    });
    await s.h.createUser(s.realm, { email: 'alice@example.com', password: 'the first password' });
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);
    await page.goto(s.authorizeUrl());
    await page.getByLabel('Email or username').fill('alice@example.com');
    await page.getByRole('button', { name: 'Sign in without a password' }).click();
    await page.getByRole('button', { name: 'Email me a code instead' }).click();
    await page.getByRole('button', { name: 'Email me a code' }).click();
    await page.getByLabel('Code').waitFor();
    const code = codeIn(await mailTo(s, 'alice@example.com'));
    await page.getByLabel('Code').fill(code === '000000' ? '111111' : '000000');
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByRole('alert').filter({ hasText: 'That code is not correct' }).waitFor();
    await page.getByLabel('Code').fill(code);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(/\/callback\?/);
    assert.deepEqual(allowed(errors), []);
  });

  test('case=sign in with a code by SMS from a local gateway', async (t) => {
    const sms = await startSmsReceiver(t);
    const h = await startHarness(t, {
      publicOriginIsListener: true,
      overrides: { 'ui.enabled': true, ...sms.overrides },
    });
    const realm = await h.createRealm();
    await h.setPolicy(realm, {
      login: { password: true, sms_otp: true, identifiers: ['email', 'username', 'phone'] },
    });
    const callback = await shopClient(h, realm);
    await h.createUser(realm, {
      email: 'alice@example.com',
      phone: '+4915112345678',
      password: 'the first password',
    });
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);
    await page.goto(
      `${h.publicUrl}/realms/${realm.name}/oauth/authorize?${authorizeQuery('shop', callback).params}`,
    );
    await page.getByLabel('Email or username').fill('+4915112345678');
    await page.getByRole('button', { name: 'Sign in without a password' }).click();
    await page.getByRole('button', { name: 'Text me a code instead' }).click();
    await page.getByRole('button', { name: 'Text me a code' }).click();
    await page.getByLabel('Code').waitFor();
    await deliverQueued(h);
    const message = sms.received.find(
      (r) => r.body.to === '+4915112345678' && r.body.text.includes(realm.display_name),
    );
    assert.ok(message, 'the gateway received the SMS');
    await page.getByLabel('Code').fill(smsCode(message));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL(/\/callback\?/);
    assert.deepEqual(allowed(errors), []);
  });

  test('case=a magic link opened in the same browser signs in', async (t) => {
    const s = await setup(t, {
      login: { password: true, magic_link: true, identifiers: ['email', 'username'] },
    });
    await s.h.createUser(s.realm, { email: 'alice@example.com', password: 'the first password' });
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);
    await page.goto(s.authorizeUrl());
    await page.getByLabel('Email or username').fill('alice@example.com');
    await page.getByRole('button', { name: 'Sign in without a password' }).click();
    await page.getByRole('button', { name: 'Email me a sign-in link instead' }).click();
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click();
    await page.getByText('Check your email and open the link in this browser.').waitFor();
    const link = linkIn(await mailTo(s, 'alice@example.com'));
    await page.goto(link);
    await page.waitForURL(/\/callback\?/);
    assert.deepEqual(allowed(errors), []);
  });

  test('case=sign in without a password, the email typed: one identify, no conflict shown', async (t) => {
    const s = await setup(t, {
      login: { password: true, magic_link: true, identifiers: ['email', 'username'] },
    });
    await s.h.createUser(s.realm, { email: 'alice@example.com', password: 'the first password' });
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);
    const identifies: number[] = [];
    page.on('response', (r) => {
      if (r.request().method() === 'POST' && r.url().endsWith('/identify')) identifies.push(r.status());
    });
    await page.goto(s.authorizeUrl());
    await page.getByLabel('Email or username').fill('alice@example.com');
    await page.getByRole('button', { name: 'Sign in without a password' }).click();
    await page.getByRole('button', { name: 'Email me a sign-in link instead' }).click();
    assert.deepEqual(identifies, [200], 'the typed email is sent once');
    assert.equal(await page.getByText('This sign-in has already ended or moved on').count(), 0);
    assert.deepEqual(errors, [], 'no failed request');
  });

  test('case=forgot password: the emailed code, a new password, signed in', async (t) => {
    const s = await setup(t, {});
    await s.h.createUser(s.realm, { email: 'alice@example.com', password: 'the first password' });
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);
    await page.goto(s.authorizeUrl());
    await page.getByLabel('Email or username').fill('alice@example.com');
    await page.getByRole('button', { name: 'Forgot your password?' }).click();
    await page.getByLabel('Code').waitFor();
    const mail = await mailTo(s, 'alice@example.com');
    assert.match(mail.subject, /Reset your password/);
    await page.getByLabel('Code').fill(codeIn(mail));
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByLabel('New password').fill('a second and better password');
    await page.getByRole('button', { name: 'Save password' }).click();
    await page.waitForURL(/\/callback\?/);
    assert.deepEqual(allowed(errors), []);
  });

  test('case=the account page deletes the account: pending_deletion and signed out', async (t) => {
    const s = await setup(t, {});
    const user = await s.h.createUser(s.realm, {
      email: 'alice@example.com',
      password: 'the first password',
    });
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);
    await page.goto(accountPage(s.h, s.realm.name));
    await page.getByLabel('Email or username').fill('alice@example.com');
    await page.getByLabel('Password', { exact: true }).fill('the first password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await accountShown(page);
    await page.getByLabel('Yes, delete my account').check();
    await page.getByRole('button', { name: 'Delete account' }).click();
    // The page names the day the grace period ends.
    await page.getByText(/^Your account will be deleted( on .+)?\. Sign in before/).waitFor();
    assert.equal((await userRow(s.h, s.realm, user.id)).state, 'pending_deletion');
    assert.deepEqual(allowed(errors), []);
  });

  test('case=an account pending deletion is kept at sign-in', async (t) => {
    const s = await setup(t, {});
    const user = await s.h.createUser(s.realm, {
      email: 'alice@example.com',
      password: 'the first password',
    });
    await s.h.ctx.db.query(`update users set state = 'pending_deletion' where realm_id = $1 and id = $2`, [
      s.realm.id,
      user.id,
    ]);
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = collectErrors(page);
    await page.goto(s.authorizeUrl());
    await page.getByLabel('Email or username').fill('alice@example.com');
    await page.getByLabel('Password', { exact: true }).fill('the first password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Keep my account' }).click();
    await page.waitForURL(/\/callback\?/);
    assert.equal((await userRow(s.h, s.realm, user.id)).state, 'active');
    assert.deepEqual(allowed(errors), []);
  });
});
