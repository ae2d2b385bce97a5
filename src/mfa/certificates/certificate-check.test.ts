// The sign-in certificate checks (certificate-check.ts): which anchor a certificate chains to, the
// client-authentication usage rules and the mapping field, with certificates from the test CA kit.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { X509Certificate } from '@peculiar/x509';
import { makeIntermediate, makeRoot, type TestCa } from '../../../test/harness/attestation-ca.ts';
import {
  issueUserCertificate,
  type UserCertificateOptions,
} from '../../../test/harness/user-certificates.ts';
import { checkCertificate, identityOf } from './certificate-check.ts';
import type { MappingSource, TrustAnchorRow } from './trust-anchors.repo.ts';

const anchorRow = (ca: TestCa, id: string, source: MappingSource = 'san_email'): TrustAnchorRow => ({
  id,
  description: id,
  certificate: ca.pem,
  subject: ca.cert.subject,
  fingerprint_sha256: id,
  multi_factor: false,
  mapping_source: source,
  mapping_identifier: 'email',
  not_after: ca.cert.notAfter,
  created_at: new Date(),
});

const leafOf = async (ca: TestCa, o: UserCertificateOptions) =>
  new X509Certificate((await issueUserCertificate(ca, o)).der);

describe('certificate sign-in checks', () => {
  test('the anchor that issued the certificate is the one returned, with the mapped value', async () => {
    const root = await makeRoot('Root');
    const issuing = await makeIntermediate(root, 'Issuing');
    const cert = await issueUserCertificate(issuing, { emails: ['a@example.com'] });
    const verdict = await checkCertificate(
      cert.der,
      [anchorRow(root, 'root'), anchorRow(issuing, 'issuing')],
      new Date(),
    );
    assert.ok(verdict.ok);
    assert.equal(verdict.anchor.id, 'issuing');
    assert.deepEqual(verdict.identifier, { type: 'email', value: 'a@example.com' });
    // Only the root trusted: the issuing CA is not taken from anywhere else, so there is no path.
    assert.deepEqual(await checkCertificate(cert.der, [anchorRow(root, 'root')], new Date()), {
      ok: false,
      refusal: 'no_path',
    });
  });

  test('usage: keyUsage and extKeyUsage must allow client authentication when present', async () => {
    const ca = await makeRoot('Usage');
    const anchors = [anchorRow(ca, 'ca')];
    const verdict = async (extendedKeyUsage: string[] | null) =>
      checkCertificate(
        (await issueUserCertificate(ca, { emails: ['a@example.com'], extendedKeyUsage })).der,
        anchors,
        new Date(),
      );
    assert.equal((await verdict(null)).ok, true);
    assert.equal((await verdict(['2.5.29.37.0'])).ok, true);
    assert.deepEqual(await verdict(['1.3.6.1.5.5.7.3.1']), { ok: false, refusal: 'not_for_client_auth' });
  });

  test('mapping fields: one distinct value, compared without case', async () => {
    const ca = await makeRoot('Names');
    const cases: [UserCertificateOptions, MappingSource, ReturnType<typeof identityOf>][] = [
      [{ emails: ['A@Example.com', 'a@example.com'] }, 'san_email', { ok: true, value: 'A@Example.com' }],
      [
        { emails: ['a@example.com', 'b@example.com'] },
        'san_email',
        { ok: false, refusal: 'ambiguous_identity' },
      ],
      [{ upn: 'alice@corp.example' }, 'san_upn', { ok: true, value: 'alice@corp.example' }],
      [{ upn: 'alice@corp.example' }, 'san_email', { ok: false, refusal: 'no_identity' }],
      [{ cn: 'alice' }, 'subject_cn', { ok: true, value: 'alice' }],
      [{ cn: 'alice' }, 'subject_email', { ok: false, refusal: 'no_identity' }],
    ];
    for (const [options, source, expected] of cases)
      assert.deepEqual(
        identityOf(await leafOf(ca, options), source),
        expected,
        `${source} ${JSON.stringify(options)}`,
      );
  });
});
