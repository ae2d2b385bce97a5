// Driving the built-in login UI and account page in a real browser (test/harness/browser.ts), for
// the browser tests and scripts/screenshots.ts: a harness serving the UI on its public origin, a
// realm with a first administrator, and the steps a person takes on each screen.
import type { TestContext } from 'node:test';
import type { Page } from 'playwright-core';
import type { NewClient } from '../../src/clients/clients.repo.ts';
import { decodeBase32 } from '../../src/mfa/base32.ts';
import { totpAt, totpStep } from '../../src/mfa/otp.ts';
import type { RealmRow } from '../../src/realms/realm.repo.ts';
import { bootstrapAdministrator } from '../../src/setup/bootstrap.service.ts';
import { type Harness, startHarness, uniqueRealmName } from './harness.ts';

/** A 1x1 PNG: a realm logo for tests (docs/login-ui.md, "Branding"). */
export const TINY_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'a long and fine administrator password';

/** A harness whose public listener is its public origin and serves the built-in UI. */
export const startUiHarness = (t: Pick<TestContext, 'after'>): Promise<Harness> =>
  startHarness(t as TestContext, { publicOriginIsListener: true, overrides: { 'ui.enabled': true } });

/**
 * The relying party of the browser tests: the public SPA client `shop` of the code flow, whose
 * callback is on `origin`. Returns the callback URL.
 */
export async function shopClient(
  h: Harness,
  realm: RealmRow,
  extra: Partial<NewClient> = {},
  origin = h.publicUrl,
): Promise<string> {
  const callback = `${origin}/callback`;
  await h.createClient(realm, {
    clientId: 'shop',
    name: 'The Shop',
    type: 'spa',
    redirectUris: [callback],
    grantTypes: ['authorization_code'],
    tokenEndpointAuthMethod: 'none',
    ...extra,
  });
  return callback;
}

/** A new realm with its first administrator, as `proudauth dev` and `identity-cli bootstrap` make it. */
export async function realmWithAdministrator(h: Harness): Promise<string> {
  const realm = uniqueRealmName();
  if (!h.ctx.keyring) throw new Error('the harness has no keyring');
  await bootstrapAdministrator(
    {
      db: h.ctx.db,
      keyring: h.ctx.keyring,
      hasher: h.ctx.hasher,
      signingAlgorithm: h.ctx.config.keys.signingAlgorithm,
      clock: h.clock,
    },
    { realm, email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
  );
  return realm;
}

export const accountPage = (h: Harness, realm: string, query = '') =>
  `${h.publicUrl}/ui/account/?realm=${realm}${query}`;

/**
 * The current code of a secret on the harness clock. The service accepts each 30-second step once,
 * so each sign-in after the first moves the clock to a fresh step first.
 */
export function currentCode(h: Harness, secret: string): string {
  return totpAt(decodeBase32(secret), totpStep(h.clock.now().getTime()));
}

/** Page errors and console errors (a Content-Security-Policy violation is one) seen on a page. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  return errors;
}

export async function enterPassword(page: Page, email = ADMIN_EMAIL, password = ADMIN_PASSWORD) {
  await page.getByLabel('Email or username').fill(email);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** The TOTP enrollment screens: returns the secret shown and the recovery codes shown once. */
export async function enrollTotp(h: Harness, page: Page): Promise<{ secret: string; codes: string[] }> {
  await page.getByRole('button', { name: 'Set up authenticator app' }).click();
  const secret = await page.locator('[data-secret]').getAttribute('data-secret');
  if (!secret) throw new Error('no secret shown');
  await page.getByLabel('Code shown by the app').fill(currentCode(h, secret));
  await page.getByRole('button', { name: 'Activate' }).click();
  await page.locator('ol.codes').waitFor();
  const codes = (await page.locator('ol.codes li').allTextContents()).map((c) => c.trim());
  return { secret, codes };
}

/** Confirms the recovery codes were saved and goes on. */
export async function confirmCodesSaved(page: Page) {
  await page.getByLabel('I have saved these recovery codes').check();
  await page.getByRole('button', { name: 'Continue' }).click();
}

/** What the account page shows under "Signed in", once it shows it. */
export async function accountShown(page: Page): Promise<{ who: string; sessions: number }> {
  await page.locator('dl.who-am-i').waitFor();
  return {
    who: (await page.locator('dl.who-am-i').textContent()) ?? '',
    sessions: await page.locator('ul.sessions li').count(),
  };
}

/**
 * Chromium's virtual authenticator (CDP WebAuthn domain) on a page: a platform passkey provider
 * that answers every ceremony by itself, user-verified unless `uv` is false.
 */
export async function withVirtualAuthenticator(page: Page, uv = true) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: uv,
      automaticPresenceSimulation: true,
    },
  });
}
