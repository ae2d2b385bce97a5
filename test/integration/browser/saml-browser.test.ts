// SAML federation in a real Chromium (docs/federation.md, SAML): a person signs in to the account
// page through an upstream SAML IdP (samlify behind a small HTTP server that checks our signed
// AuthnRequest and posts its signed Response back with an auto-submitting form), and is created
// just in time.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import { createConnection, federationSetup } from '../../harness/federation-kit.ts';
import { accountPage, accountShown } from '../../harness/login-ui-kit.ts';
import { type SamlIdp, samlConnectionBody, startSamlIdp } from '../../harness/saml-idp.ts';
import { rows } from '../../harness/signin-kit.ts';

const htmlAttr = (v: string) => v.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

describe('SAML federation in a browser', { skip: NO_BROWSER ?? false }, () => {
  test('case=sign in to the account page through a SAML IdP, created just in time/mode=browser', async (t) => {
    const s = await federationSetup(t, { ui: true });
    let idp: SamlIdp | null = null;
    const server = createServer((req, res) => {
      const url = `http://${req.headers.host}${req.url}`;
      const current = idp;
      if (!current || !req.url?.startsWith('/sso')) return void res.writeHead(404).end();
      void (async () => {
        const r = await current.receive(url);
        const spMetadata = await (await fetch(r.acs.replace(/\/acs$/, '/metadata'))).text();
        const answer = await current.respond(spMetadata, r.requestId, {
          nameId: 'saml-grace',
          email: 'grace@saml.example',
          displayName: 'Grace Saml',
        });
        res
          .writeHead(200, { 'content-type': 'text/html' })
          .end(
            `<!doctype html><form method="post" action="${htmlAttr(r.acs)}">` +
              `<input type="hidden" name="SAMLResponse" value="${htmlAttr(answer)}">` +
              `<input type="hidden" name="RelayState" value="${htmlAttr(r.relayState)}">` +
              '<button type="submit">Continue</button></form><script>document.forms[0].submit()</script>',
          );
      })().catch(() => res.writeHead(500).end());
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    t.after(() => server.close());
    idp = await startSamlIdp({ ssoUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/sso` });
    await createConnection(s, samlConnectionBody(idp));

    const browser = await launchBrowser(t);
    const page = await (await browser.newContext()).newPage();
    await page.goto(accountPage(s.h, s.realm.name));
    await page.waitForURL(/\/ui\/login\/\?/);
    await page.getByRole('button', { name: 'Continue with Corp SAML' }).click();
    const shown = await accountShown(page);
    assert.match(shown.who, /Grace Saml/);
    assert.match(shown.who, /grace@saml\.example/);
    const [user] = await rows(
      s.h,
      `select created_via from users where realm_id = $1 and display_name = 'Grace Saml'`,
      [s.realm.id],
    );
    assert.equal(user?.created_via, 'federation');
  });
});
