// Sign-in through an upstream OpenID Connect provider (docs/federation.md): external_redirect at
// step 2, federation/start, the callback, and the account made just in time on the first sign-in,
// in both bindings. The upstream is the local stand-in (test/harness/upstream-standin.ts).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  callbackOf,
  connectStandin,
  federationCookieOf,
  federationSetup,
  headless,
  openCallback,
  startFederation,
} from '../../harness/federation-kit.ts';
import { actionTypes, codeOf, events, REDIRECT, rows, startBrowser } from '../../harness/signin-kit.ts';
import { startStandin } from '../../harness/upstream-standin.ts';

describe('federation › sign-in', () => {
  test('case=the first sign-in creates the account just in time, the next one signs it in/mode=headless', async (t) => {
    const s = await federationSetup(t);
    const up = await startStandin(t);
    const c = await connectStandin(s, up);
    const tx = await headless(s);
    assert.ok(actionTypes(tx.start.body.state).includes('external_redirect'));
    const offered = tx.start.body.state.next_actions.find(
      (a: { type: string }) => a.type === 'external_redirect',
    );
    assert.deepEqual(offered.options.providers, [
      { id: c.id, alias: 'corp', display_name: 'Corp', adapter: 'generic' },
    ]);

    const started = await startFederation(tx, 'corp');
    const external = new URL(started.body.external_redirect);
    assert.equal(external.origin, up.url);
    assert.equal(external.searchParams.get('redirect_uri'), callbackOf(s, 'corp'));
    assert.equal(external.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(external.searchParams.get('nonce'));
    const back = await openCallback(await up.authorize(started.body.external_redirect));
    assert.equal(back.status, 200, await back.clone().text());
    assert.match(await back.text(), /data-message="done"/);

    const state = (await tx.get()).body;
    assert.equal(state.status, 'completed', JSON.stringify(state));
    assert.deepEqual(state.completed_factors, ['fed']);
    assert.ok(codeOf(state.redirect_to));
    const [link] = await rows(s.h, 'select * from linked_identities where realm_id = $1', [s.realm.id]);
    assert.equal(link?.provenance, 'jit');
    assert.equal(link?.upstream_subject, 'upstream-1');
    assert.equal(link?.upstream_issuer, up.issuer);
    const [user] = await rows(s.h, 'select * from users where realm_id = $1 and id = $2', [
      s.realm.id,
      link?.user_id,
    ]);
    assert.equal(user?.created_via, 'federation');
    assert.equal(user?.display_name, 'Ada Upstream');
    const created = (await events(s.h, s.realm, 'user.created')).filter(
      (e) => e.data.user_id === link?.user_id,
    );
    assert.deepEqual(
      created.map((e) => e.data.created_via),
      ['federation'],
    );
    const [email] = await rows(s.h, `select * from user_identifiers where realm_id = $1 and user_id = $2`, [
      s.realm.id,
      link?.user_id,
    ]);
    assert.deepEqual([email?.value, email?.verified], ['ada@upstream.example', true]);

    // The next sign-in finds the link: the same account, no second one.
    const again = await headless(s);
    const second = await startFederation(again, c.id);
    await openCallback(await up.authorize(second.body.external_redirect));
    const after = (await again.get()).body;
    assert.equal(after.status, 'completed');
    const links = await rows(s.h, 'select * from linked_identities where realm_id = $1', [s.realm.id]);
    assert.equal(links.length, 1);
    assert.equal(
      (
        await rows(s.h, `select 1 from users where realm_id = $1 and created_via = 'federation'`, [
          s.realm.id,
        ])
      ).length,
      1,
    );
  });

  test('case=the callback completes and sends the browser on, only in the browser that started/mode=browser', async (t) => {
    const s = await federationSetup(t);
    const up = await startStandin(t);
    await connectStandin(s, up);
    const tx = await startBrowser(s.h, s.realm.name, 'web-app', REDIRECT);
    const started = await startFederation(tx, 'corp');
    const cookie = federationCookieOf(started);
    assert.ok(cookie, 'pa_fed is set');
    const setCookie = started.headers.getSetCookie().find((c) => c.startsWith('pa_fed='));
    assert.match(setCookie ?? '', /Path=\/realms\/[^/]+\/federation\//);
    assert.match(setCookie ?? '', /HttpOnly/);
    assert.match(setCookie ?? '', /SameSite=Lax/);
    const callback = await up.authorize(started.body.external_redirect);

    const elsewhere = await openCallback(callback, 'another-browser');
    assert.equal(elsewhere.status, 400);
    assert.match(await elsewhere.text(), /other_browser/);
    assert.equal((await tx.get()).body.status, 'pending', 'the other browser changed nothing');

    // The state was used up by that attempt: the right browser starts again.
    const retry = await startFederation(tx, 'corp');
    const back = await openCallback(
      await up.authorize(retry.body.external_redirect),
      federationCookieOf(retry),
    );
    assert.equal(back.status, 303, await back.clone().text());
    const location = back.headers.get('location') ?? '';
    assert.ok(location.startsWith(REDIRECT), location);
    assert.ok(codeOf(location));
    const cookies = back.headers.getSetCookie();
    assert.ok(
      cookies.some((c) => c.startsWith('pa_sid=')),
      'the SSO session cookie is set',
    );
    assert.ok(
      cookies.some((c) => c.startsWith('pa_tx=;')),
      'the transaction cookie is cleared',
    );
    assert.ok(
      cookies.some((c) => c.startsWith('pa_fed=;')),
      'the binding cookie is cleared',
    );
  });
});
