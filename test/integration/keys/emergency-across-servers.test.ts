// An emergency rotation seen from another server process (spec doc 2, Revocation exposure:
// introspection and the service's own APIs see a revocation at once after its commit). Two
// in-process servers share one database; the other one has already cached the key set (5 s) and
// its copies of the client configuration. Both run on a clock standing still, so that cache never
// expires during the test: only the live check can end the compromised key's tokens.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { startHarness } from '../../harness/harness.ts';
import { movableClock, signinSetup } from '../../harness/signin-kit.ts';
import {
  clientSecret,
  codeFlow,
  oauthPost,
  registerIntrospector,
  seedGrant,
  seedResource,
  seedServiceClient,
} from '../../harness/token-kit.ts';

const ORDERS = 'https://orders.example.com';

describe('keys › emergency rotation across servers', () => {
  test('case=another server answers inactive for the compromised key at once', async (t) => {
    const clock = movableClock();
    const { h, realm, client: web } = await signinSetup(t, { clock });
    const other = await startHarness(t, { clock, db: h.ctx.db });
    const admin = await apiCaller(h, realm);

    // A service token and a resource server that introspects it.
    const resource = await seedResource(h, realm, { audience: ORDERS, scopes: ['orders:read'] });
    const svc = await seedServiceClient(h, realm, 'billing');
    await seedGrant(h, realm, svc.client, resource, {
      scopes: ['orders:read'],
      subjectTypes: ['service_principal'],
    });
    const rs = await seedServiceClient(h, realm, 'orders-rs');
    await registerIntrospector(h, realm, resource, rs.client);
    const issued = await oauthPost(
      h,
      realm,
      'token',
      { grant_type: 'client_credentials', resource: ORDERS },
      svc.creds,
    );
    assert.equal(issued.status, 200, JSON.stringify(issued.body));
    const serviceToken = issued.body.access_token as string;
    // A user's token for UserInfo.
    const signedIn = await codeFlow(h, realm, {
      clientId: 'web-app',
      secret: await clientSecret(h, realm, web),
    });
    assert.equal(signedIn.status, 200, JSON.stringify(signedIn.body));
    const userToken = signedIn.body.access_token as string;

    const introspectedOnOther = async () =>
      (await oauthPost(other, realm, 'introspect', { token: serviceToken }, rs.creds)).body.active;
    const userinfoOnOther = async () =>
      (
        await other.get(`/realms/${realm.name}/oauth/userinfo`, {
          headers: { authorization: `Bearer ${userToken}` },
        })
      ).status;
    // The other server has the key set and the configuration copies cached, twice over.
    for (let i = 0; i < 2; i++) {
      assert.equal(await introspectedOnOther(), true);
      assert.equal(await userinfoOnOther(), 200);
    }

    const rotated = await admin.call('POST', '/signing-key-rotations', {
      mode: 'emergency',
      reason: 'leaked',
    });
    assert.equal(rotated.status, 201);

    assert.equal(await introspectedOnOther(), false, 'inactive on the other server right after the commit');
    assert.equal(await userinfoOnOther(), 401, 'UserInfo refuses it there too');
    // A token of the new key is active there once its key-set cache has taken the new key (5 s).
    clock.advance(5000);
    const fresh = await oauthPost(
      h,
      realm,
      'token',
      { grant_type: 'client_credentials', resource: ORDERS },
      svc.creds,
    );
    const active = await oauthPost(other, realm, 'introspect', { token: fresh.body.access_token }, rs.creds);
    assert.equal(active.body.active, true);
  });
});
