// Screenshots of the built-in login UI and account page for docs/login-ui.md, taken in the same
// real Chromium and harness the browser tests use (test/harness/login-ui-kit.ts):
//   npm run screenshots   (writes docs/images/*.png)
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { deflateSync } from 'node:zlib';
import type { Page } from 'playwright-core';
import { findRealmByName } from '../src/realms/index.ts';
import { apiCaller } from '../test/harness/api-kit.ts';
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

// The example brand of the pictures (docs/login-ui.md, "Branding").
const BRAND = { display_name: 'Acme Shop', primary_color: '#0a7d4f', support_contact: 'help@acme.example' };

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (b: Buffer) => {
  let c = 0xffffffff;
  for (const byte of b) c = (CRC_TABLE[(c ^ byte) & 0xff] as number) ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type: string, data: Buffer) => {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const out = Buffer.alloc(8 + data.length + 4);
  out.writeUInt32BE(data.length, 0);
  body.copy(out, 4);
  out.writeUInt32BE(crc32(body), 8 + data.length);
  return out;
};

/** The example logo: a green ring around a dot, 96 pixels square, drawn as an RGBA PNG. */
function logoPng(): Buffer {
  const size = 96;
  const rows: Buffer[] = [];
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 4);
    for (let x = 0; x < size; x++) {
      const r = Math.hypot(x - size / 2 + 0.5, y - size / 2 + 0.5);
      const inked = (r > 30 && r < 44) || r < 16;
      if (inked) row.set([10, 125, 79, 255], 1 + x * 4);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', deflateSync(Buffer.concat(rows))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

const shoot = async (page: Page, name: string) => {
  await page.screenshot({ path: join(images, `${name}.png`), fullPage: true });
  process.stdout.write(`docs/images/${name}.png\n`);
};

try {
  mkdirSync(images, { recursive: true });
  const h = await startUiHarness(t);
  const realm = await realmWithAdministrator(h);
  const row = await findRealmByName(h.ctx.db, realm);
  if (!row) throw new Error('the realm was not made');
  await h.setPolicy(row, { interaction: BRAND });
  const logo = await (await apiCaller(h, row)).call('PUT', '/branding/logo', {
    image: logoPng().toString('base64'),
  });
  if (logo.status !== 200) throw new Error(`logo upload: ${logo.status}`);
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
  // The same page in German, chosen from its language list.
  await page.getByLabel('Language').selectOption('de');
  await page.getByRole('heading', { name: 'Ihr Konto', level: 1 }).waitFor();
  await shoot(page, 'account-de');

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
