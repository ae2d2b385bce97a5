// tls_client_auth (RFC 8705 section 2.1): RFC 4514 names and their comparison, subject alternative
// names, the CA check, and the registration rules.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { before, describe, test } from 'node:test';
import {
  issuedCertificate,
  selfSignedCertificate,
  type TestCa,
  type TestCertificate,
  testCa,
} from '../../test/harness/mtls-certs.ts';
import { checkClientDraft } from './client-rules.ts';
import { parseDistinguishedName, sameName } from './distinguished-name.ts';
import { issuedByAnchor, type StoredTlsClientAuth, tlsClientAuthProves } from './tls-client-auth.ts';

const DAY = 86_400_000;
let ca: TestCa;
let otherCa: TestCa;
let leaf: TestCertificate;
let foreign: TestCertificate;
before(async () => {
  [ca, otherCa] = await Promise.all([testCa('C=DE, O=Acme, CN=Acme CA'), testCa('CN=Other CA')]);
  [leaf, foreign] = await Promise.all([
    issuedCertificate(ca, 'C=DE, O=Acme\\, Inc., CN=billing', [
      { type: 'dns', value: 'billing.acme.example' },
      { type: 'url', value: 'spiffe://acme.example/billing' },
      { type: 'ip', value: '10.0.0.7' },
      { type: 'email', value: 'Billing@Acme.Example' },
    ]),
    issuedCertificate(otherCa, 'C=DE, O=Acme\\, Inc., CN=billing'),
  ]);
});

const settings = (member: StoredTlsClientAuth['subject']['member'], value: string): StoredTlsClientAuth => ({
  subject: { member, value },
  trust_anchors: [ca.certPem],
});
const proves = (s: StoredTlsClientAuth, c: TestCertificate = leaf, now = new Date()) =>
  tlsClientAuthProves(s, new X509Certificate(c.der), now);

describe('RFC 4514 names', () => {
  test('escapes, hex pairs, multi-valued RDNs and OIDs are read', () => {
    assert.deepEqual(parseDistinguishedName('CN=a\\,b+OU=x,O=\\41cme,2.5.4.6=DE'), [
      [
        { oid: '2.5.4.3', value: 'a,b' },
        { oid: '2.5.4.11', value: 'x' },
      ],
      [{ oid: '2.5.4.10', value: 'Acme' }],
      [{ oid: '2.5.4.6', value: 'DE' }],
    ]);
    assert.deepEqual(parseDistinguishedName('CN=caf\\C3\\A9'), [[{ oid: '2.5.4.3', value: 'café' }]]);
  });
  test('what is not a name is refused', () => {
    for (const bad of ['', 'CN', 'XX=1', 'CN=#0403666f6f', 'CN="q"', 'CN=a,', 'CN=\\zz', 'CN=\\FF'])
      assert.equal(parseDistinguishedName(bad), null, bad);
  });
  test('types compare by OID, values in any case and spacing, multi-valued RDNs in any order', () => {
    const a = parseDistinguishedName('cn=Foo  Bar , o=ACME,c=de');
    const b = parseDistinguishedName('2.5.4.3=foo bar,O=acme,C=DE');
    assert.ok(a && b && sameName(a, b));
    const m1 = parseDistinguishedName('CN=a+OU=b,O=x');
    const m2 = parseDistinguishedName('OU=b+CN=a,O=x');
    assert.ok(m1 && m2 && sameName(m1, m2));
    const order = parseDistinguishedName('O=x,CN=a+OU=b');
    assert.ok(order && m1 && !sameName(order, m1));
  });
});

describe('tls_client_auth matching', () => {
  test('the subject DN matches in RFC 4514 order, normalised', () => {
    assert.ok(proves(settings('tls_client_auth_subject_dn', 'CN=billing,O=Acme\\, Inc.,C=DE')));
    assert.ok(proves(settings('tls_client_auth_subject_dn', 'cn=BILLING, o=acme\\, inc., c=de')));
    // The encoded order read forwards is another name.
    assert.ok(!proves(settings('tls_client_auth_subject_dn', 'C=DE,O=Acme\\, Inc.,CN=billing')));
    assert.ok(!proves(settings('tls_client_auth_subject_dn', 'CN=billing,O=Acme,C=DE')));
  });
  test('each kind of subject alternative name matches only its own kind', () => {
    assert.ok(proves(settings('tls_client_auth_san_dns', 'BILLING.acme.example')));
    assert.ok(proves(settings('tls_client_auth_san_uri', 'spiffe://acme.example/billing')));
    assert.ok(!proves(settings('tls_client_auth_san_uri', 'spiffe://acme.example/Billing')));
    assert.ok(proves(settings('tls_client_auth_san_ip', '10.0.0.7')));
    assert.ok(proves(settings('tls_client_auth_san_ip', '::ffff:10.0.0.7')));
    assert.ok(proves(settings('tls_client_auth_san_email', 'Billing@acme.example')));
    assert.ok(!proves(settings('tls_client_auth_san_email', 'billing@acme.example')));
    assert.ok(!proves(settings('tls_client_auth_san_dns', 'spiffe://acme.example/billing')));
  });
  test('the same subject from another CA, or a self-signed certificate, does not prove the client', async () => {
    const dn = settings('tls_client_auth_subject_dn', 'CN=billing,O=Acme\\, Inc.,C=DE');
    assert.ok(!proves(dn, foreign));
    const self = await selfSignedCertificate('billing');
    assert.ok(!proves(settings('tls_client_auth_subject_dn', 'CN=billing'), self));
  });
  test('a certificate outside its validity, or an anchor outside its own, is refused', async () => {
    const cert = new X509Certificate(leaf.der);
    assert.ok(issuedByAnchor(cert, [ca.certPem], new Date()));
    assert.ok(!issuedByAnchor(cert, [ca.certPem], new Date(Date.now() + 60 * DAY)));
    assert.ok(!issuedByAnchor(cert, [otherCa.certPem], new Date()));
    assert.ok(!issuedByAnchor(cert, ['not a certificate'], new Date()));
    const notCa = await testCa('C=DE, O=Acme, CN=Acme CA', { ca: false });
    const underNotCa = await issuedCertificate(notCa, 'CN=x');
    assert.ok(!issuedByAnchor(new X509Certificate(underNotCa.der), [notCa.certPem], new Date()));
  });
});

describe('tls_client_auth registration', () => {
  const draft = (tls: Record<string, unknown>, method = 'tls_client_auth') => ({
    type: 'service' as const,
    tokenEndpointAuthMethod: method,
    grantTypes: ['client_credentials'],
    redirectUris: [],
    postLogoutRedirectUris: [],
    allowedOrigins: [],
    jwks: null,
    tlsClientAuth: tls,
    now: new Date(),
  });
  const fields = (tls: Record<string, unknown>, method?: string) =>
    checkClientDraft(draft(tls, method), 'production', { tlsClientAuth: true }).errors.map(
      (e) => `${e.field}:${e.code}`,
    );

  test('one subject member and CA certificates are accepted', () => {
    assert.deepEqual(
      fields({
        tls_client_auth_subject_dn: 'CN=billing,O=Acme',
        tls_client_auth_trust_anchors: [ca.certPem],
      }),
      [],
    );
  });
  test('none or two subject members, a bad value, no anchors or a non-CA anchor are refused', () => {
    assert.deepEqual(fields({ tls_client_auth_trust_anchors: [ca.certPem] }), [
      'tls_client_auth_subject_dn:required',
    ]);
    assert.deepEqual(
      fields({
        tls_client_auth_san_dns: 'a.example',
        tls_client_auth_san_ip: '10.0.0.1',
        tls_client_auth_trust_anchors: [ca.certPem],
      }),
      ['tls_client_auth_subject_dn:conflict'],
    );
    assert.deepEqual(
      fields({ tls_client_auth_san_ip: '10.0.0.300', tls_client_auth_trust_anchors: [ca.certPem] }),
      ['tls_client_auth_san_ip:invalid_ip'],
    );
    assert.deepEqual(fields({ tls_client_auth_subject_dn: 'nonsense' }), [
      'tls_client_auth_subject_dn:invalid_dn',
      'tls_client_auth_trust_anchors:required',
    ]);
    assert.deepEqual(
      fields({ tls_client_auth_san_dns: 'a.example', tls_client_auth_trust_anchors: [leaf.certPem] }),
      ['tls_client_auth_trust_anchors[0]:not_ca'],
    );
    assert.deepEqual(fields({ tls_client_auth_san_dns: 'a.example', tls_client_auth_trust_anchors: ['x'] }), [
      'tls_client_auth_trust_anchors[0]:invalid_certificate',
    ]);
  });
  test('an expired CA certificate is refused', async () => {
    const old = await testCa('CN=Old CA', { notAfter: new Date(Date.now() - 1000) });
    assert.deepEqual(
      fields({ tls_client_auth_san_dns: 'a.example', tls_client_auth_trust_anchors: [old.certPem] }),
      ['tls_client_auth_trust_anchors[0]:expired'],
    );
  });
  test('another method takes none of the members', () => {
    const errors = checkClientDraft(
      { ...draft({ tls_client_auth_san_dns: 'a.example' }, 'client_secret_basic') },
      'production',
      { tlsClientAuth: true },
    ).errors;
    assert.deepEqual(
      errors.map((e) => `${e.field}:${e.code}`),
      ['tls_client_auth_san_dns:not_allowed'],
    );
  });
});
