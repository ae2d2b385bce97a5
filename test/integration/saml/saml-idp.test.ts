// ProudAuth as a SAML identity provider, with samlify (npm) as the service provider: it reads our
// metadata, sends AuthnRequests in both bindings, and checks the signed Response and Assertion
// against the certificate the metadata published. The sign-in in between is the realm's own
// browser transaction (password, then TOTP).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  activeSamlSigner,
  generateSamlKeyMaterial,
  runSamlKeyLifecycle,
} from '../../../src/keys/saml-keys.ts';
import { endOneTimeProofs } from '../../../src/restore/one-time-proofs.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { pathOf, peers, postForm, postRequest, setup, signIn } from '../../harness/saml-idp-flow.ts';
import { ACS, binding, SP_ENTITY, type Sp, samlify } from '../../harness/saml-sp.ts';
import { json } from '../../harness/signin-driver.ts';
import { rows } from '../../harness/signin-kit.ts';

describe('SAML identity provider', () => {
  test('case=SP-initiated, HTTP-Redirect, signed request; the SP checks the Response', async (t) => {
    const spKey = await generateSamlKeyMaterial('sp', new Date());
    const s = await setup(t, { signing_certificate: spKey.certificate });
    const { idp, sp } = peers(s, { privateKey: spKey.privatePkcs8, signingCert: spKey.certificate });
    const request = sp.createLoginRequest(idp, 'redirect');
    const url = `${request.context}&RelayState=${encodeURIComponent('/after/login?x=1')}`;
    // The relay state is outside the signature samlify made; resign with it inside.
    const unsignedRelay = await s.h.get(pathOf(url), { redirect: 'manual' });
    assert.equal(unsignedRelay.status, 400, 'a parameter added after signing breaks the signature');

    const fresh = sp.createLoginRequest(idp, 'redirect');
    const { continueTo } = await signIn(s, await s.h.get(pathOf(fresh.context), { redirect: 'manual' }));
    const form = await postForm(s.h, continueTo);
    assert.equal(form.action, ACS);
    assert.ok(form.SAMLResponse);
    const { extract } = await sp.parseLoginResponse(idp, 'post', {
      body: { SAMLResponse: form.SAMLResponse },
    });
    assert.equal(extract.response.inResponseTo, fresh.id);
    assert.equal(extract.audience, SP_ENTITY);
    assert.equal(extract.attributes.email, 'alice@example.com');
    assert.equal(extract.attributes.name, 'Alice Example');
    assert.ok(extract.sessionIndex.sessionIndex);
    // persistent: pairwise, the same at the next sign-in, and not the account id.
    const stored = await rows(s.h, 'select name_id, user_id from saml_subjects where realm_id = $1', [
      s.realm.id,
    ]);
    assert.equal(stored.length, 1);
    assert.equal(extract.nameID, stored[0]!.name_id);
    assert.notEqual(extract.nameID, stored[0]!.user_id);
    const xml = Buffer.from(form.SAMLResponse, 'base64').toString('utf8');
    assert.match(xml, /Recipient="https:\/\/sp\.example\.com\/saml\/acs"/);
    assert.match(xml, /Destination="https:\/\/sp\.example\.com\/saml\/acs"/);
    assert.equal((xml.match(/<ds:Signature /g) ?? []).length, 2, 'Response and Assertion are both signed');
    assert.match(
      xml,
      /<saml:AuthnContextClassRef>https:\/\/refeds\.org\/profile\/mfa</,
      'the sign-in had MFA',
    );

    // The request state is answered once, and the request ID is used once.
    assert.equal((await s.h.get(pathOf(continueTo))).status, 400);
    assert.equal((await s.h.get(pathOf(fresh.context), { redirect: 'manual' })).status, 400);
  });

  test('case=SP-initiated, HTTP-POST, emailAddress NameID', async (t) => {
    const s = await setup(t, { name_id_format: 'email' });
    const { idp, sp } = peers(s);
    const request = sp.createLoginRequest(idp, 'post');
    const posted = await postRequest(s, request, { RelayState: 'rs-1' });
    assert.equal(posted.status, 303, await posted.clone().text());
    const start = await s.h.get(posted.headers.get('location') ?? '', { redirect: 'manual' });
    const { continueTo } = await signIn(s, start);
    const form = await postForm(s.h, continueTo);
    assert.equal(form.RelayState, 'rs-1');
    const { extract } = await sp.parseLoginResponse(idp, 'post', {
      body: { SAMLResponse: form.SAMLResponse },
    });
    assert.equal(extract.nameID, 'alice@example.com');
    assert.equal(extract.response.inResponseTo, request.id);
  });

  test('case=refusals: unknown SP, unregistered ACS, replayed ID, bad signature', async (t) => {
    const spKey = await generateSamlKeyMaterial('sp', new Date());
    const otherKey = await generateSamlKeyMaterial('other', new Date());
    const s = await setup(t, { signing_certificate: spKey.certificate });
    const { idp } = peers(s, { privateKey: spKey.privatePkcs8, signingCert: spKey.certificate });
    const plainIdp = peers(s).idp;
    const sso = async (sp: Sp, signed = true) =>
      s.h.get(pathOf(sp.createLoginRequest(signed ? idp : plainIdp, 'redirect').context), {
        redirect: 'manual',
      });

    const stranger = samlify.ServiceProvider({
      entityID: 'https://stranger.example.com',
      assertionConsumerService: [{ Binding: binding.post, Location: ACS }],
    });
    const unknown = await sso(stranger, false);
    assert.equal(unknown.status, 400);
    assert.match((await json(unknown)).body.detail, /not a SAML client/);

    const wrongAcs = samlify.ServiceProvider({
      entityID: SP_ENTITY,
      assertionConsumerService: [{ Binding: binding.post, Location: 'https://sp.example.com/other-acs' }],
      authnRequestsSigned: true,
      privateKey: spKey.privatePkcs8,
      signingCert: spKey.certificate,
    });
    const acs = await sso(wrongAcs);
    assert.equal(acs.status, 400);
    assert.match((await json(acs)).body.detail, /ACS URL is not registered/);

    const forger = samlify.ServiceProvider({
      entityID: SP_ENTITY,
      assertionConsumerService: [{ Binding: binding.post, Location: ACS }],
      authnRequestsSigned: true,
      privateKey: otherKey.privatePkcs8,
      signingCert: otherKey.certificate,
    });
    const forged = await sso(forger);
    assert.equal(forged.status, 400);
    assert.match((await json(forged)).body.detail, /not signed with the registered certificate/);

    const unsigned = samlify.ServiceProvider({
      entityID: SP_ENTITY,
      assertionConsumerService: [{ Binding: binding.post, Location: ACS }],
    });
    assert.equal(
      (await sso(unsigned, false)).status,
      400,
      'a registered certificate makes the signature required',
    );

    const good = peers(s, { privateKey: spKey.privatePkcs8, signingCert: spKey.certificate }).sp;
    const once = good.createLoginRequest(idp, 'redirect').context;
    assert.equal((await s.h.get(pathOf(once), { redirect: 'manual' })).status, 303);
    const replay = await s.h.get(pathOf(once), { redirect: 'manual' });
    assert.equal(replay.status, 400);
    assert.match((await json(replay)).body.detail, /already used/);

    // An old request: IssueInstant out of the freshness window.
    s.clock.advance(10 * 60_000);
    const late = await s.h.get(pathOf(once.replace(/&?Signature=[^&]*/, '')), { redirect: 'manual' });
    assert.equal(late.status, 400);
  });

  test('case=malformed SAML input is a problem, never a 500', async (t) => {
    const s = await setup(t);
    const sso = `/realms/${s.realm.name}/saml/sso`;
    const doctype = Buffer.from('<!DOCTYPE x [<!ENTITY e "x">]><samlp:AuthnRequest/>').toString('base64');
    const cases: [string, RequestInit | undefined, number][] = [
      [`${sso}`, undefined, 400],
      [`${sso}?SAMLRequest=%%%`, undefined, 400],
      [`${sso}?SAMLRequest=bm90IGRlZmxhdGVk`, undefined, 400],
      [`${sso}?SAMLRequest=a&SAMLRequest=b`, undefined, 400],
      [`/realms/no-such-realm/saml/sso?SAMLRequest=a`, undefined, 404],
      [`/realms/no-such-realm/saml/metadata`, undefined, 404],
      [`/realms/${s.realm.name}/saml/start?request=srq_nope`, undefined, 400],
      [`/realms/${s.realm.name}/saml/start?request=srq_00000000000000000000000000`, undefined, 400],
      ['/saml/continue?state=srq_00000000000000000000000000&code=x', undefined, 400],
      ['/saml/continue', undefined, 400],
      [
        sso,
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `SAMLRequest=${encodeURIComponent(doctype)}`,
        },
        400,
      ],
      [
        sso,
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `SAMLRequest=${encodeURIComponent(Buffer.from('<a><b></a>').toString('base64'))}`,
        },
        400,
      ],
    ];
    const wrong: string[] = [];
    for (const [path, init, status] of cases) {
      const res = await s.h.get(path, { redirect: 'manual', ...init });
      const body = await json(res);
      if (res.status !== status || typeof body.body?.code !== 'string')
        wrong.push(`${init?.method ?? 'GET'} ${path}: ${res.status} ${JSON.stringify(body.body)}`);
    }
    assert.deepEqual(wrong, []);
    // Nothing was kept for any of them.
    assert.equal(
      (await rows(s.h, 'select 1 from saml_idp_requests where realm_id = $1', [s.realm.id])).length,
      0,
    );
  });

  test('case=a restore reconciliation ends outstanding SAML request states', async (t) => {
    const s = await setup(t);
    const { idp, sp } = peers(s);
    const posted = await postRequest(s, sp.createLoginRequest(idp, 'post'));
    assert.equal(posted.status, 303);
    const ended = await s.h.ctx.db.tx((tx) => endOneTimeProofs(tx, s.clock.now()));
    assert.ok((ended.saml_idp_request_states as number) >= 1);
    const start = await s.h.get(posted.headers.get('location') ?? '', { redirect: 'manual' });
    assert.equal(start.status, 400, 'the request state ended with the reconciliation');
  });

  test('case=the SAML signing key rotates as planned: prepublished, activated, retired', async (t) => {
    const s = await setup(t);
    const certificates = async () =>
      (
        (await (await s.h.get(`/realms/${s.realm.name}/saml/metadata`)).text()).match(
          /<ds:X509Certificate>/g,
        ) ?? []
      ).length;
    const keys = () =>
      rows(s.h, 'select kid, state from saml_signing_keys where realm_id = $1 order by created_at', [
        s.realm.id,
      ]);
    assert.ok(s.h.ctx.keyring);
    const deps = {
      db: s.h.ctx.db,
      keyring: s.h.ctx.keyring,
      timings: {
        prepublishPeriodMs: 60_000,
        rotationIntervalMs: 3_600_000,
        retirementPeriodMs: 60_000,
        maxAccessTokenTtlMs: 60_000,
      },
    };
    const [first] = await keys();
    assert.equal(first?.state, 'active');
    assert.equal(await certificates(), 1);
    await runSamlKeyLifecycle(deps, s.clock.now());
    assert.equal((await keys()).length, 1, 'nothing is due yet');

    s.clock.advance(3_600_000);
    assert.ok((await runSamlKeyLifecycle(deps, s.clock.now())).saml_rotations_started >= 1);
    assert.deepEqual(
      (await keys()).map((k) => k.state),
      ['active', 'pending'],
    );
    assert.equal(await certificates(), 2, 'the next certificate is published before it signs');

    s.clock.advance(60_000);
    assert.ok((await runSamlKeyLifecycle(deps, s.clock.now())).saml_activated >= 1);
    assert.deepEqual(
      (await keys()).map((k) => k.state),
      ['retiring', 'active'],
    );
    // The new key signs from now on; the retiring one stays in the metadata until publish_until.
    const signer = await activeSamlSigner(s.h.ctx.db, s.h.ctx.keyring, s.realm, s.clock.now());
    assert.equal(signer.kid, (await keys())[1]?.kid);
    assert.equal(await certificates(), 2);

    s.clock.advance(120_000);
    assert.ok((await runSamlKeyLifecycle(deps, s.clock.now())).saml_retired >= 1);
    assert.deepEqual(
      (await keys()).map((k) => k.state),
      ['retired', 'active'],
    );
    assert.equal(await certificates(), 1);
  });

  test('case=an emergency rotation compromises the SAML key too: the metadata drops it at once', async (t) => {
    const s = await setup(t);
    const keys = () =>
      rows(s.h, 'select kid, state from saml_signing_keys where realm_id = $1 order by created_at', [
        s.realm.id,
      ]);
    const certificates = async () =>
      [
        ...(await (await s.h.get(`/realms/${s.realm.name}/saml/metadata`)).text()).matchAll(
          /<ds:X509Certificate>([^<]+)</g,
        ),
      ].map((m) => m[1]);
    const [before] = await keys();
    const published = await certificates();
    assert.equal(published.length, 1);
    // The rotation API needs a sign-in within the last 5 minutes: a fresh administrator.
    const admin = await apiCaller(s.h, s.realm);
    const r = await admin.call('POST', '/signing-key-rotations', {
      mode: 'emergency',
      reason: 'the SAML key left the building',
    });
    assert.equal(r.status, 201, await r.clone().text());
    const after = await keys();
    assert.deepEqual(
      after.map((k) => k.state),
      ['compromised', 'active'],
    );
    assert.equal(after[0]?.kid, before?.kid);
    const now = await certificates();
    assert.equal(now.length, 1, 'only the new certificate is published');
    assert.notEqual(now[0], published[0]);
    assert.ok(s.h.ctx.keyring);
    const signer = await activeSamlSigner(s.h.ctx.db, s.h.ctx.keyring, s.realm, s.clock.now());
    assert.equal(signer.kid, after[1]?.kid);
    const audit = await rows(
      s.h,
      `select type from audit_events where realm_id = $1 and type like 'saml_signing_key.%' order by occurred_at, id`,
      [s.realm.id],
    );
    assert.ok(audit.some((a) => a.type === 'saml_signing_key.compromised'));
  });

  test('case=HTTP-POST signed request: accepted as signed, refused when changed after signing', async (t) => {
    const spKey = await generateSamlKeyMaterial('sp', new Date());
    const s = await setup(t, { signing_certificate: spKey.certificate });
    const { idp, sp } = peers(s, { privateKey: spKey.privatePkcs8, signingCert: spKey.certificate });
    const signed = sp.createLoginRequest(idp, 'post');
    const xml = Buffer.from(signed.context, 'base64').toString('utf8');
    assert.match(xml, /<ds:Signature|<Signature/);
    const tampered = Buffer.from(
      xml.replace('<samlp:AuthnRequest ', '<samlp:AuthnRequest ForceAuthn="true" '),
    ).toString('base64');
    assert.notEqual(tampered, signed.context);
    const refused = await postRequest(s, { ...signed, context: tampered });
    assert.equal(refused.status, 400);
    assert.match((await json(refused)).body.detail, /not signed with the registered certificate/);
    // A second signature-bearing copy wrapped around it (signature wrapping) is refused too.
    const wrapped = Buffer.from(
      xml.replace(
        /<saml:Issuer/,
        `<samlp:Extensions>${xml.replace(/^<\?xml[^>]*>/, '')}</samlp:Extensions><saml:Issuer`,
      ),
    ).toString('base64');
    const wrappedAnswer = await postRequest(s, { ...signed, context: wrapped });
    assert.equal(wrappedAnswer.status, 400);
    assert.match((await json(wrappedAnswer)).body.detail, /not signed with the registered certificate/);
    const accepted = await postRequest(s, signed);
    assert.equal(accepted.status, 303, await accepted.clone().text());
  });

  test('case=IdP-initiated sign-in: an unsolicited Response at the first ACS URL', async (t) => {
    const s = await setup(t);
    const { idp, sp } = peers(s);
    const start = `/realms/${s.realm.name}/saml/initiate?client_id=sp-app&RelayState=%2Fhome`;
    const { continueTo } = await signIn(s, await s.h.get(start, { redirect: 'manual' }));
    const form = await postForm(s.h, continueTo);
    assert.equal(form.action, ACS);
    assert.equal(form.RelayState, '/home');
    const { extract } = await sp.parseLoginResponse(idp, 'post', {
      body: { SAMLResponse: form.SAMLResponse },
    });
    assert.equal(extract.attributes.email, 'alice@example.com');
    assert.doesNotMatch(Buffer.from(form.SAMLResponse ?? '', 'base64').toString('utf8'), /InResponseTo=/);
    for (const bad of ['client_id=web-app', 'client_id=nobody', '', 'client_id=a&client_id=b'])
      assert.equal((await s.h.get(`/realms/${s.realm.name}/saml/initiate?${bad}`)).status, 400, bad);
  });
});
