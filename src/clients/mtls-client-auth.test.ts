// Mutual-TLS client registration and authentication rules (mtls-client-rules.ts, mtls-client-auth.ts),
// the certificate binding check of access tokens (access/mtls-confirmation.ts) and where a request's
// certificate comes from (platform/http/client-certificate.ts).
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import type { Socket } from 'node:net';
import { before, describe, test } from 'node:test';
import { selfSignedCertificate, type TestCertificate } from '../../test/harness/mtls-certs.ts';
import { certificateConfirms } from '../access/mtls-confirmation.ts';
import {
  clientCertificateOf,
  parseClientCertHeader,
  thumbprintOf,
} from '../platform/http/client-certificate.ts';
import { checkClientDraft } from './client-rules.ts';
import { selfSignedMatches } from './mtls-client-auth.ts';
import { readClientMetadata } from './registration-metadata.ts';

let a: TestCertificate;
let b: TestCertificate;
before(async () => {
  [a, b] = await Promise.all([selfSignedCertificate('a'), selfSignedCertificate('b')]);
});

const draft = (keys: Record<string, unknown>[]) => ({
  type: 'service' as const,
  tokenEndpointAuthMethod: 'self_signed_tls_client_auth',
  grantTypes: ['client_credentials'],
  redirectUris: [],
  postLogoutRedirectUris: [],
  allowedOrigins: [],
  jwks: { keys },
});
const fieldsOf = (keys: Record<string, unknown>[]) =>
  checkClientDraft(draft(keys), 'production', { jwks: true }).errors.map((e) => `${e.field}:${e.code}`);

describe('self_signed_tls_client_auth registration', () => {
  test('a key with its own certificate in x5c is accepted', () => {
    assert.deepEqual(fieldsOf([a.jwk]), []);
  });
  test("a key without x5c, with an unreadable one, or with another key's certificate is refused", () => {
    const { x5c: _x5c, ...bare } = a.jwk;
    assert.deepEqual(fieldsOf([bare]), ['jwks.keys[0].x5c:required']);
    assert.deepEqual(fieldsOf([{ ...a.jwk, x5c: ['bm90IGEgY2VydA=='] }]), [
      'jwks.keys[0].x5c[0]:invalid_certificate',
    ]);
    assert.deepEqual(fieldsOf([{ ...a.jwk, x5c: b.jwk.x5c }]), ['jwks.keys[0].x5c[0]:key_mismatch']);
  });
  test('no keys at all is refused', () => {
    const errors = checkClientDraft({ ...draft([]), jwks: null }, 'production', {}).errors;
    assert.deepEqual(
      errors.map((e) => `${e.field}:${e.code}`),
      ['jwks:required'],
    );
  });
});

describe('self-signed certificate matching', () => {
  test('only the registered certificate itself matches', () => {
    const cert = new X509Certificate(a.der);
    assert.equal(selfSignedMatches({ keys: [b.jwk, a.jwk] }, cert), true);
    assert.equal(selfSignedMatches({ keys: [b.jwk] }, cert), false);
    assert.equal(selfSignedMatches(null, cert), false);
  });
});

describe('certificate confirmation of access tokens', () => {
  test('exactly the presented thumbprint confirms', () => {
    const x5t = thumbprintOf(new X509Certificate(a.der));
    const other = thumbprintOf(new X509Certificate(b.der));
    assert.equal(certificateConfirms({ 'x5t#S256': x5t }, x5t), true);
    assert.equal(certificateConfirms({ 'x5t#S256': x5t }, other), false);
    assert.equal(certificateConfirms({ 'x5t#S256': x5t }, null), false);
    assert.equal(certificateConfirms({ 'x5t#S256': x5t, jkt: x5t }, x5t), false);
    assert.equal(certificateConfirms({ jkt: x5t }, x5t), false);
    assert.equal(certificateConfirms('x5t', x5t), false);
  });
});

describe('where the client certificate comes from', () => {
  const plainSocket = {} as Socket;
  const header = () => `:${a.der.toString('base64')}:`;
  test('a Client-Cert header counts only from a trusted peer', () => {
    const req = { socket: plainSocket, headers: { 'client-cert': header() } };
    assert.equal(clientCertificateOf(req, false), null);
    assert.equal(clientCertificateOf(req, true)?.thumbprint, thumbprintOf(new X509Certificate(a.der)));
  });
  test('the certificate of the TLS connection wins over the header', () => {
    const tls = { getPeerX509Certificate: () => new X509Certificate(b.der) } as unknown as Socket;
    const got = clientCertificateOf({ socket: tls, headers: { 'client-cert': header() } }, true);
    assert.equal(got?.thumbprint, thumbprintOf(new X509Certificate(b.der)));
  });
  test('a header that is not one base64 certificate between colons is no certificate', () => {
    for (const v of [a.der.toString('base64'), ':bm90IGEgY2VydA==:', ':%%%:', '']) {
      assert.equal(parseClientCertHeader(v), null, v);
    }
    assert.equal(parseClientCertHeader([header(), header()]), null);
  });
});

describe('dynamic registration (RFC 7591) of a self_signed_tls_client_auth client', () => {
  const CB = 'https://app.example.com/cb';
  const read = (jwks: unknown) =>
    readClientMetadata(
      { redirect_uris: [CB], token_endpoint_auth_method: 'self_signed_tls_client_auth', jwks },
      ['openid'],
      'production',
    );
  test('a web client with its certificate keys registers', () => {
    const m = read({ keys: [a.jwk] });
    assert.ok(m.ok);
    assert.equal(m.type, 'web');
    assert.equal(m.draft.tokenEndpointAuthMethod, 'self_signed_tls_client_auth');
  });
  test('keys without their certificate are invalid_client_metadata', () => {
    const { x5c: _x5c, ...bare } = a.jwk;
    const m = read({ keys: [bare] });
    assert.ok(!m.ok);
    assert.equal(m.error, 'invalid_client_metadata');
    assert.deepEqual(
      m.errors.map((e) => e.field),
      ['jwks.keys[0].x5c'],
    );
  });
});
