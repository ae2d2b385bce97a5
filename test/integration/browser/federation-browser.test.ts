// Federation in a real Chromium (docs/federation.md; docs/login-ui.md): a person signs in to the
// account page through oidc-provider and is created just in time; a person whose address an
// account already holds links it on the link-account screen after proving it (in German too); a
// second ProudAuth realm signs people in to the first. The account page lists linked accounts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Page } from 'playwright-core';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import {
  callbackOf,
  createConnection,
  federationSetup,
  realmAsUpstream,
} from '../../harness/federation-kit.ts';
import { accountPage, accountShown } from '../../harness/login-ui-kit.ts';
import { type OidcPeer, startOidcPeer } from '../../harness/oidc-peer.ts';
import { PASSWORD, rows } from '../../harness/signin-kit.ts';

/** At oidc-provider's development pages: any login, any password, then consent. */
async function signInAtPeer(page: Page, peer: OidcPeer, login: string) {
  await page.waitForURL((u) => u.href.startsWith(peer.issuer));
  await page.locator('input[name="login"]').fill(login);
  await page.locator('input[name="password"]').fill('any password');
  await page.locator('button[type="submit"]').click();
  await page.locator('button[type="submit"]', { hasText: 'Continue' }).click();
}

/**
 * Errors on our own pages only (a Content-Security-Policy violation is one): the peer's development
 * pages ask the network for web fonts and a favicon, which the test machine does not have.
 */
function ourErrors(page: Page, origin: string): string[] {
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => {
    if (m.type() === 'error' && (m.location().url ?? '').startsWith(origin)) errors.push(m.text());
  });
  return errors;
}

async function withPeer(t: Parameters<typeof federationSetup>[0]) {
  const s = await federationSetup(t, { ui: true });
  const peer = await startOidcPeer(t, [callbackOf(s, 'peer')]);
  await createConnection(s, {
    alias: 'peer',
    display_name: 'Peer IdP',
    issuer: peer.issuer,
    config: { client_id: peer.clientId },
    client_secret: peer.clientSecret,
  });
  return { s, peer };
}

describe('federation in a browser', { skip: NO_BROWSER ?? false }, () => {
  test('case=sign in to the account page through oidc-provider, created just in time/mode=browser', async (t) => {
    const { s, peer } = await withPeer(t);
    peer.accounts.set('grace', { email: 'grace@peer.example', email_verified: true, name: 'Grace Hopper' });
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = ourErrors(page, s.h.publicUrl);
    await page.goto(accountPage(s.h, s.realm.name));
    await page.waitForURL(/\/ui\/login\/\?/);
    await page.getByRole('button', { name: 'Continue with Peer IdP' }).click();
    await signInAtPeer(page, peer, 'grace');
    const shown = await accountShown(page);
    assert.match(shown.who, /Grace Hopper/);
    assert.match(shown.who, /grace@peer\.example/);
    const linked = page.locator('ul.linked li');
    await linked.first().waitFor();
    assert.match((await linked.textContent()) ?? '', /Peer IdP · grace@peer\.example/);
    const [user] = await rows(
      s.h,
      `select created_via from users where realm_id = $1 and display_name = 'Grace Hopper'`,
      [s.realm.id],
    );
    assert.equal(user?.created_via, 'federation');
    assert.deepEqual(errors, []);
  });

  test('case=an existing account is linked on the link-account screen only after its password, in German/mode=browser', async (t) => {
    const { s, peer } = await withPeer(t);
    await s.h.createUser(s.realm, {
      email: 'ada@example.com',
      password: PASSWORD,
      displayName: 'Ada Lovelace',
    });
    peer.accounts.set('ada', { email: 'ada@example.com', email_verified: true, name: 'Ada at Peer' });
    const browser = await launchBrowser(t);
    const page = await (await browser.browser.newContext({ locale: 'de-DE' })).newPage();
    const errors = ourErrors(page, s.h.publicUrl);
    await page.goto(accountPage(s.h, s.realm.name, '&ui_locales=de'));
    await page.getByRole('button', { name: 'Weiter mit Peer IdP' }).click();
    await signInAtPeer(page, peer, 'ada');
    await page.getByRole('heading', { name: 'Konto verknüpfen' }).waitFor();
    await page.getByText(/a\*\*\*@example\.com/).waitFor();
    assert.equal(
      (await rows(s.h, 'select 1 from linked_identities where realm_id = $1', [s.realm.id])).length,
      0,
      'nothing linked before the proof',
    );
    await page.getByLabel('E-Mail oder Benutzername').fill('ada@example.com');
    await page.getByLabel('Passwort', { exact: true }).fill('not her password');
    await page.getByRole('button', { name: 'Anmelden', exact: true }).click();
    await page.getByRole('alert').waitFor();
    assert.equal(
      (await rows(s.h, 'select 1 from linked_identities where realm_id = $1', [s.realm.id])).length,
      0,
    );
    await page.getByLabel('Passwort', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Anmelden', exact: true }).click();
    const shown = await accountShown(page);
    assert.match(shown.who, /Ada Lovelace/);
    await page.locator('ul.linked li').first().waitFor();
    assert.match((await page.locator('ul.linked').textContent()) ?? '', /Peer IdP/);
    assert.deepEqual(errors, []);
  });

  test('case=a second ProudAuth realm signs people in to the first/mode=browser', async (t) => {
    const s = await federationSetup(t, { ui: true });
    const upstream = await realmAsUpstream(s);
    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    const errors = ourErrors(page, s.h.publicUrl);
    await page.goto(accountPage(s.h, s.realm.name));
    await page.getByRole('button', { name: 'Continue with Our other realm' }).click();
    await page.waitForURL((u) => u.searchParams.get('realm') === upstream.name);
    await page.getByLabel('Email or username').fill('hedy@upstream.example');
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const shown = await accountShown(page);
    assert.match(shown.who, /Hedy Lamarr/);
    assert.deepEqual(errors, []);
  });
});
