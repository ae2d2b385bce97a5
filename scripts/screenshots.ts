// Screenshots of the built-in login UI and account page for docs/login-ui.md, taken in the same
// real Chromium and harness the browser tests use (test/harness/login-ui-kit.ts):
//   npm run screenshots   (writes docs/images/*.png)
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser, NO_BROWSER } from '../test/harness/browser.ts';
import {
  accountPage,
  accountShown,
  confirmCodesSaved,
  currentCode,
  enterPassword,
  realmWithAdministrator,
  startUiHarness,
} from '../test/harness/login-ui-kit.ts';

const root = join(import.meta.dirname, '..');
const images = join(root, 'docs', 'images');

if (NO_BROWSER) {
  process.stderr.write(`screenshots: ${NO_BROWSER}\n`);
  process.exit(1);
}
const built = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'build-ui.ts')], {
  stdio: 'inherit',
});
if (built.status !== 0) process.exit(built.status ?? 1);

// The harness and browser register their clean-up with a test context; this script is not a test.
const cleanups: (() => unknown)[] = [];
const t = { after: (fn: () => unknown) => cleanups.push(fn) } as unknown as TestContext;

const shoot = async (page: Page, name: string) => {
  await page.screenshot({ path: join(images, `${name}.png`), fullPage: true });
  process.stdout.write(`docs/images/${name}.png\n`);
};

try {
  mkdirSync(images, { recursive: true });
  const h = await startUiHarness(t);
  const realm = await realmWithAdministrator(h);
  const { browser } = await launchBrowser(t);
  const open = async (width: number, height: number) =>
    (await browser.newContext({ viewport: { width, height }, colorScheme: 'light' })).newPage();

  const page = await open(560, 720);
  await page.goto(accountPage(h, realm));
  await page.getByLabel('Password', { exact: true }).waitFor();
  await shoot(page, 'login-password');
  await enterPassword(page);
  await page.getByRole('button', { name: 'Set up authenticator app' }).waitFor();
  // The enrollment screen with its QR code: shown by enrollTotp's first click, captured here.
  await page.getByRole('button', { name: 'Set up authenticator app' }).click();
  await page.locator('[data-secret]').waitFor();
  await shoot(page, 'login-enroll-totp');
  const secret = (await page.locator('[data-secret]').getAttribute('data-secret')) ?? '';
  await page.getByLabel('Code shown by the app').fill(currentCode(h, secret));
  await page.getByRole('button', { name: 'Activate' }).click();
  await page.locator('ol.codes').waitFor();
  await shoot(page, 'login-recovery-codes');
  await confirmCodesSaved(page);
  await page.setViewportSize({ width: 820, height: 640 });
  await accountShown(page);
  await shoot(page, 'account');

  h.clock.advance(30_000);
  const again = await open(560, 560);
  await again.goto(accountPage(h, realm));
  await enterPassword(again);
  await again.getByLabel('Authenticator code').waitFor();
  await shoot(again, 'login-totp');

  const german = await open(560, 720);
  await german.goto(accountPage(h, realm, '&ui_locales=de'));
  await german.getByRole('heading', { name: 'Passwort eingeben' }).waitFor();
  await shoot(german, 'login-password-de');
} finally {
  for (const fn of cleanups.reverse()) await fn();
}
process.exit(0);
