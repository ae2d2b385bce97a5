// SAML client settings at ProudAuth as a SAML identity provider, with samlify (npm) as the SP:
// the NameIDPolicy format an AuthnRequest asks for (used when allowed, else InvalidNameIDPolicy
// with nothing issued), groups and roles as attributes under the names the client chose, and
// PATCH of the `saml` member (partial, If-Match).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { generateSamlKeyMaterial } from '../../../src/keys/saml-keys.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { pathOf, peers, postForm, setup, signIn } from '../../harness/saml-idp-flow.ts';
import { ACS } from '../../harness/saml-sp.ts';
import { json } from '../../harness/signin-driver.ts';

const EMAIL = 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress';
const TRANSIENT = 'urn:oasis:names:tc:SAML:2.0:nameid-format:transient';

describe('SAML identity provider: client settings', () => {
  test('case=NameIDPolicy: an allowed format is used, another one refused with nothing issued', async (t) => {
    const s = await setup(t, {
      name_id_format: 'persistent',
      allowed_name_id_formats: ['persistent', 'email'],
    });
    const email = peers(s, { nameIdFormat: EMAIL });
    await s.clock.waitUntil?.(new Date()); // samlify stamps the real time
    const asked = email.sp.createLoginRequest(email.idp, 'redirect');
    const { continueTo } = await signIn(s, await s.h.get(pathOf(asked.context), { redirect: 'manual' }));
    const { extract } = await email.sp.parseLoginResponse(email.idp, 'post', {
      body: { SAMLResponse: (await postForm(s.h, continueTo)).SAMLResponse },
    });
    assert.equal(extract.nameID, 'alice@example.com', 'the format the SP asked for');

    const transient = peers(s, { nameIdFormat: TRANSIENT });
    await s.clock.waitUntil?.(new Date()); // samlify stamps the real time
    const refused = transient.sp.createLoginRequest(transient.idp, 'redirect');
    const answer = await s.h.get(pathOf(refused.context), { redirect: 'manual' });
    assert.equal(answer.status, 200, 'answered at once at the ACS URL, no sign-in');
    assert.equal(answer.headers.get('set-cookie'), null, 'no sign-in transaction was started');
    const html = await answer.text();
    assert.ok(html.includes(`action="${ACS}"`));
    const b64 = /name="SAMLResponse" value="([^"]+)"/.exec(html)?.[1] ?? '';
    const xml = Buffer.from(b64, 'base64').toString('utf8');
    assert.match(xml, /status:InvalidNameIDPolicy/);
    assert.match(xml, new RegExp(`InResponseTo="${refused.id}"`));
    assert.doesNotMatch(xml, /Assertion/, 'nothing is asserted');
    await assert.rejects(
      transient.sp.parseLoginResponse(transient.idp, 'post', { body: { SAMLResponse: b64 } }),
      'samlify reads it as a failure',
    );
    const again = await s.h.get(pathOf(refused.context), { redirect: 'manual' });
    assert.equal(again.status, 400, 'the refused request ID is not taken again');
  });

  test('case=groups and roles as attributes under the names the client chose', async (t) => {
    const s = await setup(t, { groups_attribute: 'memberOf', roles_attribute: 'roles' });
    const now = s.clock.now();
    const db = s.h.ctx.db;
    for (const [id, name] of [
      ['grp_a', 'Engineering'],
      ['grp_b', 'On call'],
    ]) {
      await db.query(
        `insert into groups (realm_id, id, depth, name, created_at, updated_at) values ($1, $2, 1, $3, $4, $4)`,
        [s.realm.id, id, name, now],
      );
    }
    await db.query(
      `insert into group_members (realm_id, group_id, subject_type, subject_id, created_at)
       values ($1, 'grp_a', 'user', $2, $3), ($1, 'grp_b', 'user', $2, $3)`,
      [s.realm.id, s.userId, now],
    );
    await db.query(
      `insert into roles (realm_id, id, name) values ($1, 'rol_x', 'wiki-editor'), ($1, 'rol_y', 'wiki-admin'),
         ($1, 'rol_z', 'expired-role')`,
      [s.realm.id],
    );
    await db.query(
      `insert into role_assignments (realm_id, id, role_id, subject_type, subject_id, scope_type, source, expires_at)
       values ($1, 'ra_1', 'rol_x', 'user', $2, 'realm', 'admin', null),
              ($1, 'ra_2', 'rol_y', 'group', 'grp_b', 'realm', 'admin', null),
              ($1, 'ra_3', 'rol_z', 'user', $2, 'realm', 'admin', $3)`,
      [s.realm.id, s.userId, new Date(now.getTime() - 1000)],
    );
    const { idp, sp } = peers(s);
    await s.clock.waitUntil?.(new Date()); // samlify stamps the real time
    const request = sp.createLoginRequest(idp, 'redirect');
    const { continueTo } = await signIn(s, await s.h.get(pathOf(request.context), { redirect: 'manual' }));
    const { extract } = await sp.parseLoginResponse(idp, 'post', {
      body: { SAMLResponse: (await postForm(s.h, continueTo)).SAMLResponse },
    });
    assert.deepEqual([extract.attributes.memberOf].flat(), ['Engineering', 'On call']);
    assert.deepEqual([extract.attributes.roles].flat(), ['wiki-admin', 'wiki-editor']);
    assert.equal(extract.attributes.email, 'alice@example.com');
  });

  test('case=an SP with an encryption certificate gets its assertion encrypted, and decrypts it', async (t) => {
    const enc = await generateSamlKeyMaterial('sp-enc', new Date());
    const s = await setup(t, { encryption_certificate: enc.certificate });
    const { idp, sp } = peers(s, { encPrivateKey: enc.privatePkcs8 });
    await s.clock.waitUntil?.(new Date()); // samlify stamps the real time
    const request = sp.createLoginRequest(idp, 'redirect');
    const { continueTo } = await signIn(s, await s.h.get(pathOf(request.context), { redirect: 'manual' }));
    const form = await postForm(s.h, continueTo);
    const xml = Buffer.from(form.SAMLResponse ?? '', 'base64').toString('utf8');
    assert.match(xml, /<saml:EncryptedAssertion>/);
    assert.match(xml, /Algorithm="http:\/\/www\.w3\.org\/2009\/xmlenc11#aes256-gcm"/);
    assert.match(xml, /Algorithm="http:\/\/www\.w3\.org\/2001\/04\/xmlenc#rsa-oaep-mgf1p"/);
    assert.doesNotMatch(xml, /alice@example\.com|<saml:Assertion/, 'nothing of the assertion in clear');
    const { extract } = await sp.parseLoginResponse(idp, 'post', {
      body: { SAMLResponse: form.SAMLResponse },
    });
    assert.equal(extract.attributes.email, 'alice@example.com');
    assert.equal(extract.response.inResponseTo, request.id);
    // Another SP key cannot read it.
    const other = await generateSamlKeyMaterial('other-enc', new Date());
    const stranger = peers(s, { encPrivateKey: other.privatePkcs8 });
    await assert.rejects(
      stranger.sp.parseLoginResponse(stranger.idp, 'post', { body: { SAMLResponse: form.SAMLResponse } }),
    );
  });

  test('case=PATCH changes the given SAML members only, with If-Match; refusals change nothing', async (t) => {
    const s = await setup(t);
    const admin = await apiCaller(s.h, s.realm);
    const before = await json(await admin.call('GET', '/clients/sp-app'));
    const etag = before.headers.get('etag');
    assert.ok(etag);
    const stale = await admin.call(
      'PATCH',
      '/clients/sp-app',
      { saml: { slo_url: 'https://sp.example.com/slo' } },
      {
        'if-match': '"999"',
      },
    );
    assert.equal(stale.status, 412);

    const patched = await json(
      await admin.call(
        'PATCH',
        '/clients/sp-app',
        {
          saml: {
            slo_url: 'https://sp.example.com/slo',
            groups_attribute: 'memberOf',
            name_id_format: 'email',
          },
        },
        { 'if-match': etag },
      ),
    );
    assert.equal(patched.status, 200, JSON.stringify(patched.body));
    assert.deepEqual(patched.body.saml, {
      ...before.body.saml,
      slo_url: 'https://sp.example.com/slo',
      groups_attribute: 'memberOf',
      name_id_format: 'email',
      allowed_name_id_formats: ['email', 'persistent'],
    });
    assert.notEqual(patched.headers.get('etag'), etag, 'the version moved');

    const other = await admin.call('POST', '/clients', {
      client_id: 'sp-other',
      name: 'Other',
      type: 'saml',
      saml: { entity_id: 'https://other.example.com', acs_urls: ['https://other.example.com/acs'] },
    });
    assert.equal(other.status, 201);
    const refusals: [string, unknown, number, string][] = [
      ['/clients/sp-app', { saml: { entity_id: 'https://other.example.com' } }, 409, 'conflict'],
      [
        '/clients/sp-app',
        { saml: { allowed_name_id_formats: ['transient'] } },
        422,
        'saml.allowed_name_id_formats',
      ],
      ['/clients/sp-app', { saml: { slo_url: 'not a url' } }, 422, 'saml.slo_url'],
      ['/clients/sp-app', { saml: { roles_attribute: 'memberOf' } }, 422, 'saml.roles_attribute'],
      ['/clients/sp-app', { saml: { acs_urls: [] } }, 422, 'saml.acs_urls'],
      [
        '/clients/sp-app',
        { saml: { encryption_certificate: 'not a certificate' } },
        422,
        'saml.encryption_certificate',
      ],
      ['/clients/web-app', { saml: { slo_url: 'https://sp.example.com/slo' } }, 422, 'saml'],
    ];
    const wrong: string[] = [];
    for (const [path, body, status, what] of refusals) {
      const res = await json(await admin.call('PATCH', path, body));
      const named = status === 409 || JSON.stringify(res.body.errors ?? []).includes(`"${what}"`);
      if (res.status !== status || !named)
        wrong.push(`${JSON.stringify(body)}: ${res.status} ${JSON.stringify(res.body)}`);
    }
    assert.deepEqual(wrong, []);
    const after = await json(await admin.call('GET', '/clients/sp-app'));
    assert.deepEqual(after.body.saml, patched.body.saml, 'no refusal changed anything');
  });
});
