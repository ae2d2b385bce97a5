// Single logout at ProudAuth as a SAML identity provider (SAML Profiles 4.4), with samlify (npm)
// as the service providers: an SP's signed LogoutRequest ends the SSO session, the other SP of
// that session gets a signed LogoutRequest through the browser, the first one a signed
// LogoutResponse; a logout at ProudAuth itself sends LogoutRequests the same way.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { generateSamlKeyMaterial } from '../../../src/keys/saml-keys.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { pathOf, postForm, type Setup, setup, signIn } from '../../harness/saml-idp-flow.ts';
import { redirectParts, SP_SLO, type Sp, samlPeers } from '../../harness/saml-sp.ts';
import { json } from '../../harness/signin-driver.ts';
import { parseSetCookies, rows } from '../../harness/signin-kit.ts';

/** samlify stamps messages with the real time: the server's clock catches up first. */
const catchUp = (s: Setup) => s.clock.waitUntil?.(new Date());

const TWO = {
  entityId: 'https://two.example.com/saml/metadata',
  acs: 'https://two.example.com/saml/acs',
  slo: 'https://two.example.com/saml/slo',
};

const unescapeHtml = (s: string) => s.replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c)));

/** The front-channel page: its frames' URLs and where it goes on to. */
async function logoutPage(res: Response) {
  assert.equal(res.status, 200, await res.clone().text());
  assert.match(res.headers.get('content-security-policy') ?? '', /frame-src https:\/\//);
  const html = await res.text();
  return {
    frames: [...html.matchAll(/<iframe hidden title="sign-out" src="([^"]+)"/g)].map((m) =>
      unescapeHtml(m[1]!),
    ),
    next: /data-next="([^"]+)"/.exec(html)?.[1] ? unescapeHtml(/data-next="([^"]+)"/.exec(html)![1]!) : null,
  };
}

/** Two SAML clients signing requests with one key, both with an SLO URL; alice signed in to both. */
async function twoSps(t: TestContext) {
  const key = await generateSamlKeyMaterial('sp', new Date());
  const s = await setup(t, { signing_certificate: key.certificate, slo_url: SP_SLO });
  const admin = await apiCaller(s.h, s.realm);
  const created = await admin.call('POST', '/clients', {
    client_id: 'sp-two',
    name: 'Second SAML App',
    type: 'saml',
    saml: {
      entity_id: TWO.entityId,
      acs_urls: [TWO.acs],
      signing_certificate: key.certificate,
      slo_url: TWO.slo,
    },
  });
  assert.equal(created.status, 201, await created.clone().text());
  assert.equal((await json(created)).body.saml.slo_url, TWO.slo);
  const signing = { privateKey: key.privatePkcs8, signingCert: key.certificate };
  const one = samlPeers(s.idpMetadata, { ...signing, slo: SP_SLO });
  const two = samlPeers(s.idpMetadata, { ...signing, ...TWO });

  await catchUp(s);
  const first = await signIn(
    s,
    await s.h.get(pathOf(one.sp.createLoginRequest(one.idp, 'redirect').context), { redirect: 'manual' }),
  );
  const login1 = await readLogin(s, one.sp, one.idp, first.continueTo);
  // The second SP reuses the SSO session: no login UI, straight to the continuation.
  await catchUp(s);
  const sso2 = await s.h.get(pathOf(two.sp.createLoginRequest(two.idp, 'redirect').context), {
    redirect: 'manual',
    headers: { cookie: `pa_sid=${first.sid}` },
  });
  assert.equal(sso2.status, 303);
  const login2 = await readLogin(s, two.sp, two.idp, sso2.headers.get('location') ?? '');
  assert.equal(login1.sessionIndex, login2.sessionIndex, 'one SSO session');
  return { s, key, one, two, sid: first.sid, login1, login2 };
}

async function readLogin(s: Setup, sp: Sp, idp: Parameters<Sp['parseLoginResponse']>[0], continueTo: string) {
  const form = await postForm(s.h, continueTo);
  const { extract } = await sp.parseLoginResponse(idp, 'post', { body: { SAMLResponse: form.SAMLResponse } });
  return { nameId: extract.nameID as string, sessionIndex: extract.sessionIndex.sessionIndex as string };
}

/** Whether the SSO session is still live. */
const isLive = async (s: Setup, sessionId: string) =>
  (
    await rows(s.h, 'select 1 from sessions where realm_id = $1 and id = $2 and revoked_at is null', [
      s.realm.id,
      sessionId,
    ])
  ).length === 1;

describe('SAML identity provider: single logout', () => {
  test('case=SP-initiated: the session ends, the other SP is told, the first one answered', async (t) => {
    const { s, one, two, sid, login1, login2 } = await twoSps(t);
    await catchUp(s);
    const request = one.sp.createLogoutRequest(
      one.idp,
      'redirect',
      { logoutNameID: login1.nameId, sessionIndex: login1.sessionIndex },
      'after-logout',
    );
    const answer = await s.h.get(pathOf(request.context), { headers: { cookie: `pa_sid=${sid}` } });
    assert.ok(
      parseSetCookies(answer.headers).some((c) => c.name === 'pa_sid' && c.value === ''),
      'the browser session cookie is cleared',
    );
    const page = await logoutPage(answer);
    assert.equal(await isLive(s, login1.sessionIndex), false, 'the SSO session ended');
    const audit = await rows(
      s.h,
      `select data from audit_events where realm_id = $1 and type = 'user.logged_out'`,
      [s.realm.id],
    );
    assert.equal(audit.length, 1);
    assert.equal(audit[0]!.data.via, 'saml_logout_request');

    // The other SP: a LogoutRequest signed by the key in our metadata, for its NameID and session.
    assert.equal(page.frames.length, 1);
    assert.ok(page.frames[0]!.startsWith(`${TWO.slo}?`));
    const toTwo = await two.sp.parseLogoutRequest(two.idp, 'redirect', redirectParts(page.frames[0]!));
    assert.equal(toTwo.extract.nameID, login2.nameId);
    assert.deepEqual([toTwo.extract.sessionIndex].flat(), [login2.sessionIndex]);
    // The requesting SP: a signed LogoutResponse to its request, with its RelayState (samlify
    // refuses one whose status is not Success).
    assert.ok(page.next?.startsWith(`${SP_SLO}?`));
    const toOne = await one.sp.parseLogoutResponse(one.idp, 'redirect', redirectParts(page.next!));
    assert.equal(toOne.extract.response.inResponseTo, request.id);
    assert.equal(redirectParts(page.next!).query.RelayState, 'after-logout');

    // The same request again is refused; the second SP's answer is taken, a forged one is not.
    const replay = await s.h.get(pathOf(request.context));
    assert.equal(replay.status, 400);
    assert.match((await json(replay)).body.detail, /already used/);
    const reply = two.sp.createLogoutResponse(two.idp, toTwo, 'redirect');
    const taken = await s.h.get(pathOf(reply.context));
    assert.equal(taken.status, 200, await taken.clone().text());
    const other = await generateSamlKeyMaterial('other', new Date());
    const forger = samlPeers(s.idpMetadata, {
      privateKey: other.privatePkcs8,
      signingCert: other.certificate,
      ...TWO,
    });
    const forged = await s.h.get(
      pathOf(forger.sp.createLogoutResponse(forger.idp, toTwo, 'redirect').context),
    );
    assert.equal(forged.status, 400);
  });

  test('case=refusals end nothing: unsigned, another key, no SLO URL, stale, unknown SP, malformed', async (t) => {
    const { s, key, one, login1 } = await twoSps(t);
    const user = { logoutNameID: login1.nameId, sessionIndex: login1.sessionIndex };
    const other = await generateSamlKeyMaterial('other', new Date());
    const unsigned = samlPeers(s.idpMetadata, { slo: SP_SLO });
    const forger = samlPeers(s.idpMetadata, {
      privateKey: other.privatePkcs8,
      signingCert: other.certificate,
      slo: SP_SLO,
    });
    const stranger = samlPeers(s.idpMetadata, {
      privateKey: key.privatePkcs8,
      signingCert: key.certificate,
      entityId: 'https://stranger.example.com',
      slo: 'https://stranger.example.com/slo',
    });
    const slo = `/realms/${s.realm.name}/saml/slo`;
    await catchUp(s);
    const cases: [string, string, RegExp][] = [
      ['unsigned', unsigned.sp.createLogoutRequest(unsigned.idp, 'redirect', user).context, /not signed/],
      ['another key', forger.sp.createLogoutRequest(forger.idp, 'redirect', user).context, /not signed/],
      [
        'unknown SP',
        stranger.sp.createLogoutRequest(stranger.idp, 'redirect', user).context,
        /not a SAML client/,
      ],
      ['nothing', slo, /one SAMLRequest or SAMLResponse/],
      ['both', `${slo}?SAMLRequest=a&SAMLResponse=b`, /one SAMLRequest or SAMLResponse/],
      ['not deflated', `${slo}?SAMLRequest=bm90IGRlZmxhdGVk`, /inflate/],
      ['not base64', `${slo}?SAMLRequest=%%%`, /.+/],
    ];
    const wrong: string[] = [];
    for (const [name, url, detail] of cases) {
      const res = await json(await s.h.get(url.startsWith('/') ? url : pathOf(url)));
      if (res.status !== 400 || !detail.test(res.body?.detail ?? ''))
        wrong.push(`${name}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    assert.deepEqual(wrong, []);
    assert.ok(await isLive(s, login1.sessionIndex), 'the session is still live');

    // A stale request: signed and otherwise right, but its IssueInstant is 10 minutes old.
    await catchUp(s);
    const good = one.sp.createLogoutRequest(one.idp, 'redirect', user).context;
    s.clock.advance(10 * 60_000);
    const late = await json(await s.h.get(pathOf(good)));
    assert.equal(late.status, 400);
    assert.match(late.body.detail, /IssueInstant/);

    // An SP without an SLO URL takes no part in single logout.
    const patched = await s.h.ctx.db.query(
      `update saml_clients set slo_url = null where realm_id = $1 and entity_id = $2`,
      [s.realm.id, TWO.entityId],
    );
    assert.equal(patched.rowCount, 1);
    s.clock.advance(-10 * 60_000);
    await catchUp(s);
    const two = samlPeers(s.idpMetadata, {
      privateKey: key.privatePkcs8,
      signingCert: key.certificate,
      ...TWO,
    });
    const noSlo = await json(
      await s.h.get(pathOf(two.sp.createLogoutRequest(two.idp, 'redirect', user).context)),
    );
    assert.equal(noSlo.status, 400);
    assert.match(noSlo.body.detail, /no single logout URL/);
    assert.ok(await isLive(s, login1.sessionIndex), 'the session is still live');
  });

  test('case=IdP-initiated: signing out of ProudAuth sends LogoutRequests to the SPs', async (t) => {
    const { s, one, two, sid, login1, login2 } = await twoSps(t);
    const res = await s.h.get(`/realms/${s.realm.name}/oauth/logout`, {
      headers: { cookie: `pa_sid=${sid}`, accept: 'text/html' },
    });
    const page = await logoutPage(res);
    assert.equal(page.next, null, 'no redirect was asked for');
    assert.equal(page.frames.length, 2);
    assert.equal(await isLive(s, login1.sessionIndex), false);
    const toOne = await one.sp.parseLogoutRequest(one.idp, 'redirect', redirectParts(page.frames[0]!));
    const toTwo = await two.sp.parseLogoutRequest(two.idp, 'redirect', redirectParts(page.frames[1]!));
    assert.equal(toOne.extract.nameID, login1.nameId);
    assert.equal(toTwo.extract.nameID, login2.nameId);
    // A second logout has no session left to end, and nobody to tell.
    const again = await s.h.get(`/realms/${s.realm.name}/oauth/logout`, {
      headers: { cookie: `pa_sid=${sid}`, accept: 'text/html' },
    });
    assert.equal(again.status, 200);
    assert.deepEqual((await json(again)).body, { logged_out: true });
  });
});
