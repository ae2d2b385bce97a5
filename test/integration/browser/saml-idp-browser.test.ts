// A SAML test application signs a user in through ProudAuth in a real Chromium (docs/saml-idp.md):
// samlify as the service provider sends an AuthnRequest, the built-in login UI asks for the
// password and, since the SAML client requires MFA, sets up and uses an authenticator; the
// auto-submitting form (under its hash-only Content Security Policy) posts the Response to the
// ACS URL, where samlify checks it against our metadata.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { launchBrowser, NO_BROWSER } from '../../harness/browser.ts';
import {
  ADMIN_EMAIL,
  collectErrors,
  confirmCodesSaved,
  enrollTotp,
  enterPassword,
  realmWithAdministrator,
  startUiHarness,
} from '../../harness/login-ui-kit.ts';
import { ACS, SP_ENTITY, samlPeers } from '../../harness/saml-sp.ts';

describe('SAML identity provider in a browser', { skip: NO_BROWSER ?? false }, () => {
  test('case=a user signs in to a SAML application with MFA', async (t) => {
    const h = await startUiHarness(t);
    const realmName = await realmWithAdministrator(h);
    const realm = await h.ctx.realms.byName(realmName);
    assert.ok(realm);
    const admin = await apiCaller(h, realm);
    const created = await admin.call('POST', '/clients', {
      client_id: 'wiki',
      name: 'Team wiki',
      type: 'saml',
      token_policy: { require_mfa: true },
      saml: { entity_id: SP_ENTITY, acs_urls: [ACS], name_id_format: 'email', attributes: ['email'] },
    });
    assert.equal(created.status, 201);
    const metadata = await (await fetch(`${h.publicUrl}/realms/${realmName}/saml/metadata`)).text();
    const { idp, sp } = samlPeers(metadata);

    const browser = await launchBrowser(t);
    const context = await browser.newContext();
    // The application's ACS: the browser's POST is taken here and answered with a page.
    let posted: string | null = null;
    await context.route(`${ACS}**`, async (route) => {
      posted = route.request().postData();
      await route.fulfill({ status: 200, contentType: 'text/html', body: '<p>signed in to the wiki</p>' });
    });
    const page = await context.newPage();
    const errors = collectErrors(page);
    const request = sp.createLoginRequest(idp, 'redirect');
    await page.goto(request.context);
    await page.waitForURL(/\/ui\/login\/\?/);
    await enterPassword(page);
    await enrollTotp(h, page);
    await confirmCodesSaved(page);
    await page.getByText('signed in to the wiki').waitFor();
    assert.deepEqual(errors, [], 'no script, policy or network errors');

    assert.ok(posted, 'the form posted to the ACS URL');
    const form = new URLSearchParams(posted);
    const { extract } = await sp.parseLoginResponse(idp, 'post', {
      body: { SAMLResponse: form.get('SAMLResponse') ?? undefined },
    });
    assert.equal(extract.nameID, ADMIN_EMAIL);
    assert.equal(extract.attributes.email, ADMIN_EMAIL);
    assert.equal(extract.response.inResponseTo, request.id);
    const xml = Buffer.from(form.get('SAMLResponse') ?? '', 'base64').toString('utf8');
    assert.match(xml, /<saml:AuthnContextClassRef>https:\/\/refeds\.org\/profile\/mfa</);
  });
});
