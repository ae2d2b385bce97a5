// Federation with real peers nobody on this project wrote a line of (docs/federation.md): oidc-provider
// as the upstream, and a second ProudAuth realm as the upstream of the first. Both bindings here
// over HTTP; test/integration/browser/federation-browser.test.ts drives the same in Chromium.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  callbackOf,
  createConnection,
  type FederationSetup,
  federationCookieOf,
  federationSetup,
  headless,
  openCallback,
  realmAsUpstream,
  startFederation,
} from '../../harness/federation-kit.ts';
import { startOidcPeer } from '../../harness/oidc-peer.ts';
import { codeOf, PASSWORD, REDIRECT, rows, startBrowser } from '../../harness/signin-kit.ts';
import { signInAt } from '../real-clients/rp-kit.ts';

async function withPeer(t: Parameters<typeof federationSetup>[0]) {
  const s = await federationSetup(t);
  const peer = await startOidcPeer(t, [callbackOf(s, 'peer')]);
  peer.accounts.set('grace', { email: 'grace@peer.example', email_verified: true, name: 'Grace Hopper' });
  await createConnection(s, {
    alias: 'peer',
    display_name: 'Peer',
    issuer: peer.issuer,
    config: { client_id: peer.clientId },
    client_secret: peer.clientSecret,
  });
  return { s, peer };
}

const accountOf = async (s: FederationSetup, subject: string) =>
  (
    await rows(
      s.h,
      `select u.*, l.provenance, l.upstream_issuer from linked_identities l
         join users u on u.realm_id = l.realm_id and u.id = l.user_id
        where l.realm_id = $1 and l.upstream_subject = $2`,
      [s.realm.id, subject],
    )
  )[0];

describe('federation › real peers', () => {
  test('case=oidc-provider as the upstream: just in time, then the same account/mode=headless', async (t) => {
    const { s, peer } = await withPeer(t);
    for (let i = 0; i < 2; i++) {
      const tx = await headless(s);
      const started = await startFederation(tx, 'peer');
      const back = await openCallback(await peer.signIn(started.body.external_redirect, 'grace'));
      assert.equal(back.status, 200, await back.clone().text());
      const state = (await tx.get()).body;
      assert.equal(state.status, 'completed', JSON.stringify(state));
    }
    const grace = await accountOf(s, 'grace');
    assert.equal(grace?.provenance, 'jit');
    assert.equal(
      grace?.display_name,
      'Grace Hopper',
      'read from the peer UserInfo (its ID token carries sub only)',
    );
    assert.equal(grace?.upstream_issuer, peer.issuer);
    assert.equal(
      (
        await rows(s.h, `select 1 from users where realm_id = $1 and created_via = 'federation'`, [
          s.realm.id,
        ])
      ).length,
      1,
    );
  });

  test('case=oidc-provider as the upstream/mode=browser', async (t) => {
    const { s, peer } = await withPeer(t);
    const tx = await startBrowser(s.h, s.realm.name, 'web-app', REDIRECT);
    const started = await startFederation(tx, 'peer');
    const back = await openCallback(
      await peer.signIn(started.body.external_redirect, 'grace'),
      federationCookieOf(started),
    );
    assert.equal(back.status, 303);
    assert.ok(codeOf(back.headers.get('location') ?? ''));
    assert.ok(await accountOf(s, 'grace'));
  });

  test('case=a second ProudAuth realm as the upstream/mode=headless', async (t) => {
    const s = await federationSetup(t);
    const upstream = await realmAsUpstream(s);
    const tx = await headless(s);
    const started = await startFederation(tx, 'proud');
    const callback = await signInAt(
      s.h,
      upstream,
      new URL(started.body.external_redirect),
      'hedy@upstream.example',
    );
    assert.equal(
      callback.searchParams.get('iss'),
      `${s.h.publicUrl}/realms/${upstream.name}`,
      'RFC 9207 iss',
    );
    const back = await openCallback(callback.href);
    assert.equal(back.status, 200, await back.clone().text());
    const state = (await tx.get()).body;
    assert.equal(state.status, 'completed', JSON.stringify(state));
    const [hedy] = await rows(
      s.h,
      `select u.display_name, i.value, i.verified from linked_identities l
         join users u on u.realm_id = l.realm_id and u.id = l.user_id
         join user_identifiers i on i.realm_id = u.realm_id and i.user_id = u.id and i.type = 'email'
        where l.realm_id = $1`,
      [s.realm.id],
    );
    assert.deepEqual(
      [hedy?.display_name, hedy?.value, hedy?.verified],
      ['Hedy Lamarr', 'hedy@upstream.example', true],
    );
  });
});
