// The account page as a console that manages every factor (issue 30; docs/login-ui.md, "Account
// page"), in a real Chromium under the pages' strict policy: one browser and one realm for the
// whole walk, each step a subtest that builds on the one before. Passkeys use Chromium's virtual
// authenticator (CDP WebAuthn domain) as the login UI's passkey tests do.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { JobRunner } from '../../../src/jobs/index.ts';
import { JOB_TYPES, type WorkerDeps } from '../../../src/main/worker/tasks.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import { decodeBase32 } from '../../../src/mfa/base32.ts';
import { hotp } from '../../../src/mfa/otp.ts';
import { findPasswordVerifier } from '../../../src/users/users.repo.ts';
import { de } from '../../../ui/lib/messages.de.ts';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import {
  accountShown,
  collectErrors,
  confirmCodesSaved,
  currentCode,
  enterPassword,
  startUiHarness,
  withVirtualAuthenticator,
} from '../../harness/login-ui-kit.ts';

const EMAIL = 'alice@example.com';
const FIRST_PASSWORD = 'the first long password';
const NEW_PASSWORD = 'a second and better password';

/** User agents and the device name the page gives each. */
const DEVICES: Record<string, string> = {
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0':
    'Edge on Windows',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15':
    'Safari on macOS',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/126.0 Mobile/15E148 Safari/604.1':
    'Chrome on iOS',
  'Mozilla/5.0 (Android 14; Mobile; rv:128.0) Gecko/128.0 Firefox/128.0': 'Firefox on Android',
  'Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0': 'Firefox on Linux',
  'curl/8.5.0': 'curl',
  '': 'Unknown device',
};
const LIVE = 'select count(*) n from sessions where realm_id = $1 and user_id = $2 and revoked_at is null';
/** Chromium logs each refused request; the refusals this walk asks for are no error. */
const REFUSED = /^Failed to load resource: the server responded with a status of (403|422) /;

const notice = (page: Page, text: string) => page.getByRole('status').filter({ hasText: text }).waitFor();
const alert = (page: Page, text: string) => page.getByRole('alert').filter({ hasText: text }).waitFor();

describe('account page › a console that manages every factor', { skip: NO_BROWSER ?? false }, () => {
  test('case=one user walks every section in Chromium, then a recovery-code session is refused', async (t) => {
    const h = await startUiHarness(t);
    // WebAuthn needs a domain as rp id: the browser talks to localhost, not 127.0.0.1.
    const origin = h.publicUrl.replace('127.0.0.1', 'localhost');
    h.ctx.config.server.publicOrigin = origin;
    const realm = await h.createRealm();
    await h.setPolicy(realm, {
      login: { password: true, passkeys: true, remember_devices: true },
      mfa: { allowed_factors: ['totp', 'webauthn', 'recovery_code', 'hotp'] },
      interaction: { display_name: 'Acme Shop', primary_color: '#0a7d4f' },
    });
    const user = await h.createUser(realm, { email: EMAIL, password: FIRST_PASSWORD });
    const db = h.ctx.db;
    const count = async (sql: string) =>
      Number((await db.query<{ n: string }>(sql, [realm.id, user.id])).rows[0]?.n);
    const passwordIs = async (password: string) => {
      const verifier = await findPasswordVerifier(db, realm.id, user.id);
      return verifier !== null && (await h.ctx.hasher.verify(password, verifier));
    };
    const accountUrl = `${origin}/ui/account/?realm=${realm.name}`;
    const browser = await launchBrowser(t);
    const errors: string[][] = [];
    const open = async () => {
      const page = await (await browser.newContext()).newPage();
      errors.push(collectErrors(page));
      return page;
    };
    /** Password, then the authenticator code on a fresh 30-second step. */
    const signInWithTotp = async (page: Page, secret: string, remember: boolean) => {
      await enterPassword(page, EMAIL, NEW_PASSWORD);
      h.clock.advance(30_000);
      await page.getByLabel('Authenticator code').fill(currentCode(h, secret));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('button', { name: remember ? 'Remember this browser' : 'Not now' }).click();
    };

    const page = await open();
    await withVirtualAuthenticator(page);
    await page.goto(accountUrl);
    await enterPassword(page, EMAIL, FIRST_PASSWORD);
    await accountShown(page);
    let secret = '';
    let codes: string[] = [];

    await t.test('sessions in words: the device and the methods, never raw codes', async () => {
      const session = page.locator('ul.sessions li').first();
      assert.match((await session.locator('.device').textContent()) ?? '', /^(Headless )?Chrome on Linux$/);
      assert.equal(await session.locator('.methods-used').textContent(), 'Signed in with: Password');
      assert.doesNotMatch((await page.locator('main').textContent()) ?? '', /Mozilla\/5\.0|\bpwd\b/);
      // The page's own parser on the user agents people have, in the browser as the page runs it.
      // A source string, so the test build leaves its import() alone.
      const named = await page.evaluate<string[]>(
        `import('/ui/account/words.js').then((w) => ${JSON.stringify(Object.keys(DEVICES))}.map((ua) => w.deviceName(ua)))`,
      );
      assert.deepEqual(named, Object.values(DEVICES));
    });

    await t.test('the password is changed with the current one', async () => {
      await page.getByLabel('Current password').fill('not the password');
      await page.getByLabel('New password').fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Change password' }).click();
      await alert(page, 'The current password is not right.');
      await page.getByLabel('Current password').fill(FIRST_PASSWORD);
      await page.getByLabel('New password').fill(NEW_PASSWORD);
      await page.getByRole('button', { name: 'Change password' }).click();
      await notice(page, 'Your password is changed.');
      assert.equal(await passwordIs(NEW_PASSWORD), true);
    });

    await t.test('an authenticator app is enrolled from its QR code; the codes are shown once', async () => {
      await page.getByRole('button', { name: 'Set up authenticator app' }).click();
      await page.locator('[data-secret]').waitFor();
      assert.equal(await page.locator('svg.qr').count(), 1);
      secret = (await page.locator('[data-secret]').getAttribute('data-secret')) ?? '';
      await page.getByLabel('Code shown by the app').fill(currentCode(h, secret));
      await page.getByRole('button', { name: 'Activate' }).click();
      await page.locator('ol.codes').waitFor();
      codes = (await page.locator('ol.codes li').allTextContents()).map((c) => c.trim());
      assert.equal(codes.length, 10);
      await confirmCodesSaved(page);
      // The codes are gone once saved: the page is drawn again with the notice alone.
      await page.locator('ol.codes').waitFor({ state: 'detached' });
      await notice(page, 'Your authenticator app is set up.');
      assert.equal(
        await count('select count(*) n from totp_credentials where realm_id = $1 and user_id = $2'),
        1,
      );
    });

    await t.test('a passkey needs a second step now; the page offers a fresh sign-in', async () => {
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await alert(page, 'For this change, sign in again');
      await page.getByRole('button', { name: 'Sign in again to continue' }).click();
      await signInWithTotp(page, secret, true);
      await accountShown(page);
      assert.equal(
        await count('select count(*) n from remembered_devices where realm_id = $1 and user_id = $2'),
        1,
      );
      // The device just remembered is listed by name, and can be forgotten alone.
      const remembered = page.locator('ul.devices li');
      assert.equal(await remembered.count(), 1);
      assert.match((await remembered.first().textContent()) ?? '', /Chrome on Linux, remembered/);
      await remembered.first().getByRole('button', { name: 'Forget' }).click();
      await notice(page, 'The device is forgotten.');
      assert.equal(
        await count('select count(*) n from remembered_devices where realm_id = $1 and user_id = $2'),
        0,
      );
      await page.getByText('No device is remembered.').waitFor();
    });

    await t.test('a passkey is added, renamed and removed', async () => {
      await page.getByLabel('Name for this passkey').fill('Laptop');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      await notice(page, 'Your passkey is added.');
      await page.locator('ul.passkeys').getByText('Laptop').waitFor();
      await page.getByRole('button', { name: 'Rename Laptop' }).click();
      await page.getByLabel('New name').fill('Work laptop');
      await page.keyboard.press('Enter');
      await notice(page, 'The passkey is now called Work laptop.');
      const names = await db.query<{ name: string }>(
        'select name from webauthn_credentials where realm_id = $1 and user_id = $2',
        [realm.id, user.id],
      );
      assert.deepEqual(
        names.rows.map((r) => r.name),
        ['Work laptop'],
      );
      await page.getByRole('button', { name: 'Remove Work laptop' }).click();
      await notice(page, 'Work laptop is removed.');
      assert.equal(
        await count('select count(*) n from webauthn_credentials where realm_id = $1 and user_id = $2'),
        0,
      );
    });

    await t.test('new recovery codes replace the old ones and are shown once', async () => {
      await page.getByRole('button', { name: 'Get new recovery codes' }).click();
      await page.locator('ol.codes').waitFor();
      const fresh = (await page.locator('ol.codes li').allTextContents()).map((c) => c.trim());
      assert.equal(fresh.length, 10);
      assert.deepEqual(
        fresh.filter((c) => codes.includes(c)),
        [],
      );
      codes = fresh;
      await confirmCodesSaved(page);
      await page.locator('ol.codes').waitFor({ state: 'detached' });
      await notice(page, 'Your new recovery codes are ready.');
    });

    const other = await open();
    await t.test('remembered devices are forgotten; another session is ended', async () => {
      await other.goto(accountUrl);
      await signInWithTotp(other, secret, false);
      await accountShown(other);
      // The device remembered at the fresh sign-in is listed by name, and forgotten alone.
      await page.getByRole('button', { name: 'Forget remembered devices' }).click();
      await notice(page, 'Your remembered devices are forgotten.');
      assert.equal(
        await count('select count(*) n from remembered_devices where realm_id = $1 and user_id = $2'),
        0,
      );
      // This browser's first session, its fresh sign-in's and the other browser's.
      const sessions = page.locator('ul.sessions li');
      assert.equal(await sessions.count(), 3, 'the redrawn page lists the other browser');
      assert.equal(await sessions.filter({ has: page.locator('.badge') }).count(), 1, 'one is this one');
      await sessions
        .filter({ hasNot: page.locator('.badge') })
        .first()
        .getByRole('button', { name: /^End the session on (Headless )?Chrome on Linux$/ })
        .click();
      await notice(page, 'has ended.');
      assert.equal(await page.locator('ul.sessions li').count(), 2);
      assert.equal(await count(LIVE), 2);
    });

    await t.test('a code token (HOTP), which this realm allows, is set up and removed', async () => {
      await page.getByRole('button', { name: 'Set up code token' }).click();
      const key = (await page.locator('[data-secret]').getAttribute('data-secret')) ?? '';
      await page.getByLabel('Code shown by the token').fill(hotp(decodeBase32(key), 0));
      await page.getByRole('button', { name: 'Activate' }).click();
      await notice(page, 'Your code token is set up.');
      const tokens = 'select count(*) n from hotp_credentials where realm_id = $1 and user_id = $2';
      assert.equal(await count(tokens), 1);
      assert.equal(await page.locator('#m-hotp ~ [data-state="on"]').count(), 1, 'shown as set up');
      await page.getByRole('button', { name: 'Remove code token' }).click();
      await notice(page, 'Your code token is removed.');
      assert.equal(await count(tokens), 0);
    });

    await t.test('the authenticator app shows as set up, is removed, and is set up again', async () => {
      const totp = 'select count(*) n from totp_credentials where realm_id = $1 and user_id = $2';
      assert.equal(await page.locator('#m-totp ~ [data-state="on"]').count(), 1);
      assert.equal(await page.locator('[data-remaining="10"]').count(), 1, 'ten unused recovery codes');
      await page.getByRole('button', { name: 'Remove authenticator app' }).click();
      await notice(page, 'Your authenticator app is removed.');
      assert.equal(await count(totp), 0);
      assert.equal(await page.locator('#m-totp ~ [data-state="off"]').count(), 1);
      await page.getByRole('button', { name: 'Set up authenticator app' }).click();
      await page.locator('[data-secret]').waitFor();
      secret = (await page.locator('[data-secret]').getAttribute('data-secret')) ?? '';
      await page.getByLabel('Code shown by the app').fill(currentCode(h, secret));
      await page.getByRole('button', { name: 'Activate' }).click();
      // A new app answers with new recovery codes when it replaces the old ones' batch; wait for
      // this answer, not the notice still shown from the step before.
      await page
        .locator('ol.codes')
        .or(page.getByText('Your authenticator app is set up.'))
        .first()
        .waitFor();
      if ((await page.locator('ol.codes').count()) > 0) {
        codes = (await page.locator('ol.codes li').allTextContents()).map((c) => c.trim());
        await confirmCodesSaved(page);
      }
      await notice(page, 'Your authenticator app is set up.');
      assert.equal(await count(totp), 1);
    });

    await t.test('a personal data export is prepared and downloaded', async () => {
      const queued = page.waitForResponse((r) => r.url().endsWith('/me/exports'));
      await page.getByRole('button', { name: 'Prepare a download' }).click();
      assert.equal((await queued).status(), 202);
      const runner = new JobRunner<WorkerDeps>(workerDeps(h.ctx) as WorkerDeps, JOB_TYPES, {
        holder: 'account-console-test',
      });
      assert.deepEqual(await runner.runDue(10), { succeeded: 1 });
      const saving = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Download your data' }).click();
      const file = await saving;
      assert.equal(file.suggestedFilename(), 'export.json');
      const doc = JSON.parse(await readFile((await file.path()) ?? '', 'utf8')) as {
        profile: { id: string };
      };
      assert.equal(doc.profile.id, user.id);
    });

    await t.test('the page switches to German and remembers it; Sign out ends this session', async () => {
      await page.getByLabel('Language').selectOption('de');
      await page.getByRole('heading', { name: de['acct.title'], level: 1 }).waitFor();
      assert.equal(await page.locator('html').getAttribute('lang'), 'de');
      assert.equal(
        await page.evaluate(() =>
          (
            globalThis as unknown as { localStorage: { getItem(k: string): string | null } }
          ).localStorage.getItem('proudauth.account.locale'),
        ),
        'de',
      );
      assert.match((await page.locator('ul.sessions .methods-used').first().textContent()) ?? '', /Passwort/);
      await page.getByRole('button', { name: de['acct.sign_out'], exact: true }).click();
      await notice(page, de['acct.signed_out'] ?? '');
      assert.equal(await count(LIVE), 1, "this browser's session is ended");
    });

    await t.test('a recovery-code session sees its writes refused with the reason', async () => {
      const restricted = await open();
      await restricted.goto(accountUrl);
      await enterPassword(restricted, EMAIL, NEW_PASSWORD);
      await restricted.getByRole('button', { name: 'Use a recovery code instead' }).click();
      await restricted.getByLabel('Recovery code').fill(codes[0] ?? '');
      await restricted.getByRole('button', { name: 'Verify' }).click();
      await accountShown(restricted);
      await restricted.getByLabel('Current password').fill(NEW_PASSWORD);
      await restricted.getByLabel('New password').fill('a third password nobody knows');
      await restricted.getByRole('button', { name: 'Change password' }).click();
      await alert(restricted, 'This change is locked after a recovery-code sign-in');
      await restricted.getByRole('button', { name: 'Get new recovery codes' }).click();
      await alert(restricted, 'This change is locked after a recovery-code sign-in');
      assert.equal(await restricted.locator('ol.codes').count(), 0);
      assert.equal(await passwordIs(NEW_PASSWORD), true, 'the password is unchanged');
      // What a restricted session may do still works: forgetting remembered devices.
      await restricted.getByRole('button', { name: 'Forget remembered devices' }).click();
      await notice(restricted, 'Your remembered devices are forgotten.');
    });

    await t.test('no script or Content-Security-Policy error on any page', () => {
      assert.deepEqual(
        errors.flat().filter((e) => !REFUSED.test(e)),
        [],
      );
    });
  });
});
