// Sign-in through an upstream SAML 2.0 IdP (docs/federation.md, SAML). The IdP is samlify
// (test/harness/saml-idp.ts): it reads the connection's SP metadata, checks our signed
// AuthnRequest, and answers at the ACS. Every refused answer leaves nothing signed in and no account.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { endOneTimeProofs } from '../../../src/restore/one-time-proofs.ts';
import {
  createConnection,
  type FederationSetup,
  federationSetup,
  headless,
  nothingLinkedNothingIssued,
  openCallback,
  startFederation,
  usersOf,
} from '../../harness/federation-kit.ts';
import {
  DS_NS,
  MFA_CLASS,
  parseXml,
  SAML_NS,
  SAMLP_NS,
  type SamlIdp,
  type SamlUser,
  samlConnectionBody,
  serializeXml,
  startSamlIdp,
  type Tamper,
  type XmlDoc,
  type XmlNode,
} from '../../harness/saml-idp.ts';
import { rows } from '../../harness/signin-kit.ts';

const ADA: SamlUser = { nameId: 'saml-ada', email: 'ada@idp.example', displayName: 'Ada Saml' };

const connect = (s: FederationSetup, idp: SamlIdp, extra: Record<string, unknown> = {}) =>
  createConnection(s, samlConnectionBody(idp, extra));

/** A headless sign-in sent to the IdP: the request it received and the SP metadata. */
async function sendToIdp(s: FederationSetup, idp: SamlIdp) {
  const tx = await headless(s);
  const started = await startFederation(tx, 'corp-saml');
  const request = await idp.receive(started.body.external_redirect);
  const spMetadata = await (
    await fetch(`${s.h.publicUrl}/realms/${s.realm.name}/federation/corp-saml/saml/metadata`)
  ).text();
  return { tx, ...request, spMetadata };
}

/** Posts a SAMLResponse to the ACS as the browser would, then follows to the callback. */
async function post(acs: string, samlResponse: string, relayState: string): Promise<Response> {
  const res = await fetch(acs, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ SAMLResponse: samlResponse, RelayState: relayState }).toString(),
  });
  if (res.status !== 303) return res;
  const location = res.headers.get('location') ?? '';
  return openCallback(new URL(location, acs).href);
}

const b64 = (xml: string) => Buffer.from(xml, 'utf8').toString('base64');
const xmlOf = (r: string) => Buffer.from(r, 'base64').toString('utf8');
const first = (n: XmlNode, ns: string, name: string): XmlNode => {
  const found = n.getElementsByTagNameNS(ns, name)[0];
  assert.ok(found, name);
  return found;
};

/** The evil twin of the signed assertion: no signature, another ID and subject. */
function evilOf(assertion: XmlNode): XmlNode {
  const evil = assertion.cloneNode(true);
  const sig = evil.getElementsByTagNameNS(DS_NS, 'Signature')[0];
  if (sig) evil.removeChild(sig);
  evil.setAttribute('ID', '_evil');
  const nameId = first(evil, SAML_NS, 'NameID');
  if (nameId.firstChild) nameId.removeChild(nameId.firstChild);
  nameId.appendChild(evil.ownerDocument.createTextNode('evil-admin'));
  return evil;
}

type Wrap = (doc: XmlDoc) => void;

/** XSW shapes after the known catalogue (McIntosh and Austel; Somorovsky et al.). */
const XSW: Record<string, Wrap> = {
  // XSW1: an evil response at the root, the signed original inside it.
  xsw1: (d) => {
    const original = d.documentElement;
    const evil = original.cloneNode(true);
    const sig = evil.getElementsByTagNameNS(DS_NS, 'Signature')[0];
    if (sig?.parentNode) sig.parentNode.removeChild(sig);
    const assertion = first(evil, SAML_NS, 'Assertion');
    evil.replaceChild(evilOf(assertion), assertion);
    evil.setAttribute('ID', '_evil_response');
    evil.appendChild(original.cloneNode(true));
    d.removeChild(original);
    d.appendChild(evil);
  },
  // XSW2: the signed original placed before the evil content, as a sibling inside the root.
  xsw2: (d) => {
    const root = d.documentElement;
    const assertion = first(root, SAML_NS, 'Assertion');
    const copy = root.cloneNode(true);
    root.replaceChild(evilOf(assertion), assertion);
    root.insertBefore(copy, root.firstChild);
  },
  // XSW3: an unsigned evil assertion before the signed one.
  xsw3: (d) => {
    const assertion = first(d.documentElement, SAML_NS, 'Assertion');
    d.documentElement.insertBefore(evilOf(assertion), assertion);
  },
  // XSW4: the evil assertion wraps the signed one.
  xsw4: (d) => {
    const assertion = first(d.documentElement, SAML_NS, 'Assertion');
    const evil = evilOf(assertion);
    d.documentElement.replaceChild(evil, assertion);
    evil.appendChild(assertion);
  },
  // XSW5: the evil assertion carries the original's signature; the original moves to Extensions.
  xsw5: (d) => {
    const assertion = first(d.documentElement, SAML_NS, 'Assertion');
    const evil = evilOf(assertion);
    const sig = first(assertion, DS_NS, 'Signature');
    evil.insertBefore(sig.cloneNode(true), evil.firstChild?.nextSibling ?? null);
    const ext = d.createElementNS(SAMLP_NS, 'samlp:Extensions');
    d.documentElement.replaceChild(evil, assertion);
    ext.appendChild(assertion);
    d.documentElement.insertBefore(ext, d.documentElement.firstChild?.nextSibling ?? null);
  },
  // XSW6: the evil assertion with the signature; the original inside the signature's Object.
  xsw6: (d) => {
    const assertion = first(d.documentElement, SAML_NS, 'Assertion');
    const evil = evilOf(assertion);
    const sig = first(assertion, DS_NS, 'Signature').cloneNode(true);
    const object = d.createElementNS(DS_NS, 'ds:Object');
    object.appendChild(assertion.cloneNode(true));
    sig.appendChild(object);
    evil.insertBefore(sig, evil.firstChild?.nextSibling ?? null);
    d.documentElement.replaceChild(evil, assertion);
  },
  // XSW7: the signed original inside Extensions, the evil assertion where it was.
  xsw7: (d) => {
    const assertion = first(d.documentElement, SAML_NS, 'Assertion');
    const ext = d.createElementNS(SAMLP_NS, 'samlp:Extensions');
    ext.appendChild(assertion.cloneNode(true));
    d.documentElement.replaceChild(evilOf(assertion), assertion);
    d.documentElement.insertBefore(ext, d.documentElement.firstChild);
  },
  // XSW8: the evil assertion with the signature; the original, unsigned, in the signature's Object.
  xsw8: (d) => {
    const assertion = first(d.documentElement, SAML_NS, 'Assertion');
    const evil = evilOf(assertion);
    const sig = first(assertion, DS_NS, 'Signature');
    const bare = assertion.cloneNode(true);
    const bareSig = bare.getElementsByTagNameNS(DS_NS, 'Signature')[0];
    if (bareSig) bare.removeChild(bareSig);
    const object = d.createElementNS(DS_NS, 'ds:Object');
    object.appendChild(bare);
    const movedSig = sig.cloneNode(true);
    movedSig.appendChild(object);
    evil.insertBefore(movedSig, evil.firstChild?.nextSibling ?? null);
    d.documentElement.replaceChild(evil, assertion);
  },
};

async function refusedWith(
  s: FederationSetup,
  idp: SamlIdp,
  make: (r: Awaited<ReturnType<typeof sendToIdp>>) => Promise<string>,
) {
  const before = await usersOf(s);
  const sent = await sendToIdp(s, idp);
  const res = await post(sent.acs, await make(sent), sent.relayState);
  assert.notEqual(res.status, 500);
  const state = (await sent.tx.get()).body;
  assert.notEqual(state.status, 'completed', JSON.stringify(state));
  assert.deepEqual(state.completed_factors ?? [], []);
  await nothingLinkedNothingIssued(s, before);
}

describe('federation › SAML', () => {
  test('case=a signed assertion signs in, creating the account and its link; the SP metadata and request are real', async (t) => {
    const s = await federationSetup(t);
    const idp = await startSamlIdp();
    const c = await connect(s, idp);
    assert.equal(c.kind, 'saml');
    assert.equal(c.issuer, idp.entityId);
    assert.match(String(c.sp_certificate), /BEGIN CERTIFICATE/);
    const sent = await sendToIdp(s, idp);
    assert.match(sent.spMetadata, /AuthnRequestsSigned="true"/);
    assert.match(sent.spMetadata, /use="encryption"/);
    assert.equal(sent.acs, `${s.h.publicUrl}/realms/${s.realm.name}/federation/corp-saml/saml/acs`);
    const back = await post(
      sent.acs,
      await idp.respond(sent.spMetadata, sent.requestId, ADA),
      sent.relayState,
    );
    assert.equal(back.status, 200, await back.clone().text());
    const state = (await sent.tx.get()).body;
    assert.equal(state.status, 'completed', JSON.stringify(state));
    assert.deepEqual(state.completed_factors, ['fed']);
    const [link] = await rows(s.h, 'select * from linked_identities where realm_id = $1', [s.realm.id]);
    assert.equal(link?.provenance, 'jit');
    assert.equal(link?.upstream_subject, 'saml-ada');
    assert.equal(link?.upstream_issuer, idp.entityId);
    const [user] = await rows(s.h, 'select * from users where realm_id = $1 and id = $2', [
      s.realm.id,
      link?.user_id,
    ]);
    assert.equal(user?.display_name, 'Ada Saml');
    const [email] = await rows(s.h, 'select * from user_identifiers where realm_id = $1 and user_id = $2', [
      s.realm.id,
      link?.user_id,
    ]);
    assert.deepEqual([email?.value, email?.verified], ['ada@idp.example', true]);

    // The same answer again: the request is answered and the assertion id spent.
    const replay = await fetch(sent.acs, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        SAMLResponse: await idp.respond(sent.spMetadata, sent.requestId, ADA),
        RelayState: sent.relayState,
      }).toString(),
    });
    assert.equal(replay.status, 400);
  });

  test('case=an encrypted assertion with an MFA context gives fed and fed_mfa when the connection trusts it', async (t) => {
    const s = await federationSetup(t);
    const idp = await startSamlIdp({ encrypt: true });
    await connect(s, idp, { trust_upstream_mfa: true });
    const sent = await sendToIdp(s, idp);
    const answer = await idp.respond(sent.spMetadata, sent.requestId, { ...ADA, classRef: MFA_CLASS });
    assert.match(xmlOf(answer), /EncryptedAssertion/);
    assert.doesNotMatch(xmlOf(answer), /saml-ada/);
    const back = await post(sent.acs, answer, sent.relayState);
    assert.equal(back.status, 200, await back.clone().text());
    const state = (await sent.tx.get()).body;
    assert.equal(state.status, 'completed', JSON.stringify(state));
    assert.deepEqual([...state.completed_factors].sort(), ['fed', 'fed_mfa']);
  });

  test('case=a replayed assertion id is refused for a later request', async (t) => {
    const s = await federationSetup(t);
    const idp = await startSamlIdp();
    await connect(s, idp);
    const a = await sendToIdp(s, idp);
    const ok = await post(
      a.acs,
      await idp.respond(a.spMetadata, a.requestId, ADA, { assertionId: '_same' }),
      a.relayState,
    );
    assert.equal(ok.status, 200);
    assert.equal((await a.tx.get()).body.status, 'completed');
    const usersBefore = await usersOf(s);
    const b = await sendToIdp(s, idp);
    await post(
      b.acs,
      await idp.respond(b.spMetadata, b.requestId, ADA, { assertionId: '_same' }),
      b.relayState,
    );
    assert.notEqual((await b.tx.get()).body.status, 'completed');
    assert.equal(await usersOf(s), usersBefore);
  });

  const refusals: [string, Tamper][] = [
    ['another audience', { audience: 'https://other-sp.example/metadata' }],
    ['another Destination', { destination: 'https://other-sp.example/acs' }],
    ['another Recipient', { recipient: 'https://other-sp.example/acs' }],
    ['expired', { notOnOrAfterMinutes: -10 }],
    ['unsolicited (no InResponseTo)', { inResponseTo: null }],
    ['an answer to another request', { inResponseTo: '_not_ours' }],
  ];
  for (const [name, tamper] of refusals)
    test(`case=${name} is refused: nothing signed in, no account`, async (t) => {
      const s = await federationSetup(t);
      const idp = await startSamlIdp();
      await connect(s, idp);
      await refusedWith(s, idp, (r) => idp.respond(r.spMetadata, r.requestId, ADA, tamper));
    });

  test('case=unsigned and tampered answers are refused', async (t) => {
    const s = await federationSetup(t);
    const idp = await startSamlIdp();
    await connect(s, idp);
    await refusedWith(s, idp, async (r) =>
      b64(
        xmlOf(await idp.respond(r.spMetadata, r.requestId, ADA)).replace(
          /<ds:Signature[\s\S]*?<\/ds:Signature>/g,
          '',
        ),
      ),
    );
    await refusedWith(s, idp, async (r) =>
      b64(xmlOf(await idp.respond(r.spMetadata, r.requestId, ADA)).replace('>saml-ada<', '>evil-admin<')),
    );
  });

  for (const signResponse of [false, true])
    test(`case=every signature-wrapping shape XSW1-XSW8 is refused/response signed=${signResponse}`, async (t) => {
      const s = await federationSetup(t);
      const idp = await startSamlIdp({ signResponse });
      await connect(s, idp);
      for (const [name, wrap] of Object.entries(XSW)) {
        await t.test(name, async () => {
          await refusedWith(s, idp, async (r) => {
            const doc = parseXml(xmlOf(await idp.respond(r.spMetadata, r.requestId, ADA)));
            wrap(doc);
            const xml = serializeXml(doc);
            assert.match(xml, /evil-admin/);
            return b64(xml);
          });
        });
      }
    });

  test('case=metadata by URL through the egress guard; bad definitions are 422; bad ACS posts are 400 and change nothing', async (t) => {
    const s = await federationSetup(t);
    const idp = await startSamlIdp();
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/samlmetadata+xml' }).end(idp.metadata);
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    t.after(() => server.close());
    const metadataUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metadata`;
    const c = await createConnection(s, {
      alias: 'by-url',
      display_name: 'By URL',
      kind: 'saml',
      config: { metadata_url: metadataUrl },
    });
    assert.equal(c.issuer, idp.entityId);
    assert.equal(c.config.sso_url, `${new URL(idp.entityId).origin}/sso`);
    assert.equal(c.config.idp_certificates.length, 1);
    const exported = await rows(s.h, 'select client_secret_sealed from identity_providers where id = $1', [
      c.id,
    ]);
    assert.ok(exported[0]?.client_secret_sealed, 'the SP private key is sealed');
    assert.doesNotMatch(String(exported[0]?.client_secret_sealed), /PRIVATE KEY/);

    const bad = async (body: Record<string, unknown>, fields: string[]) => {
      const res = await s.admin.call('POST', '/identity-providers', {
        alias: 'bad',
        display_name: 'Bad',
        kind: 'saml',
        config: {},
        ...body,
      });
      const problem = (await res.json()) as { errors?: { field: string }[] };
      assert.equal(res.status, 422, JSON.stringify(problem));
      assert.deepEqual(problem.errors?.map((e) => e.field).sort(), fields.sort());
    };
    await bad({ issuer: 'urn:idp' }, ['config.sso_url', 'config.idp_certificates']);
    await bad({ idp_metadata_xml: idp.metadata, client_secret: 'x' }, ['client_secret']);
    await bad({ idp_metadata_xml: '<x/>' }, ['idp_metadata_xml']);
    await bad({ idp_metadata_xml: `<!DOCTYPE x [<!ENTITY a "b">]>${idp.metadata}` }, ['idp_metadata_xml']);
    await bad({ idp_metadata_xml: idp.metadata, config: { client_id: 'x' } }, ['config.client_id']);

    const acs = `${s.h.publicUrl}/realms/${s.realm.name}/federation/by-url/saml/acs`;
    const before = await usersOf(s);
    const forms: Record<string, string>[] = [
      {},
      { SAMLResponse: 'AAAA' },
      { SAMLResponse: 'AAAA', RelayState: 'unknown' },
      { SAMLResponse: 'x'.repeat(300 * 1024), RelayState: 'unknown' },
    ];
    for (const form of forms) {
      const res = await fetch(acs, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(form).toString(),
      });
      assert.ok([400, 413].includes(res.status), `${res.status}`);
    }
    // A garbage response to a real request: a failed proof, never a 500.
    await connect(s, idp);
    await refusedWith(s, idp, async () => b64('<not-saml/>'));
    assert.equal(await usersOf(s), before);
    const missing = await fetch(`${s.h.publicUrl}/realms/${s.realm.name}/federation/nope/saml/metadata`);
    assert.equal(missing.status, 404);
  });

  test('case=a restore ends open SAML request states: their answers find no request', async (t) => {
    const s = await federationSetup(t);
    const idp = await startSamlIdp();
    await connect(s, idp);
    const before = await usersOf(s);
    const sent = await sendToIdp(s, idp);
    const ended = await s.h.ctx.db.tx((tx) => endOneTimeProofs(tx, s.h.clock.now()));
    assert.equal(ended.saml_request_states, 1);
    assert.equal(ended.federation_requests, 0);
    const res = await post(
      sent.acs,
      await idp.respond(sent.spMetadata, sent.requestId, ADA),
      sent.relayState,
    );
    assert.equal(res.status, 400);
    assert.equal(await usersOf(s), before);
  });

  test("case=control: the XSW tests' parse and serialize round trip alone still signs in", async (t) => {
    const s = await federationSetup(t);
    const idp = await startSamlIdp({ signResponse: true });
    await connect(s, idp);
    const sent = await sendToIdp(s, idp);
    const doc = parseXml(xmlOf(await idp.respond(sent.spMetadata, sent.requestId, ADA)));
    const back = await post(sent.acs, b64(serializeXml(doc)), sent.relayState);
    assert.equal(back.status, 200);
    assert.equal((await sent.tx.get()).body.status, 'completed');
  });
});
