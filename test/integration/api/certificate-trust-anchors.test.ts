// Certificate trust anchors (docs/certificate-signin.md): the administration API that lists, adds
// and removes the CA certificates a realm trusts for certificate sign-in, with its validation,
// duplicate and count rules and its audit records.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { makeRoot } from '../../harness/attestation-ca.ts';
import { startHarness } from '../../harness/harness.ts';
import { audits } from '../../harness/signin-kit.ts';
import { issueUserCertificate } from '../../harness/user-certificates.ts';

async function setup(t: TestContext) {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  return { h, realm, admin };
}

const fieldCodes = async (r: Response) =>
  ((await r.json()) as { errors?: { field: string; code: string }[] }).errors?.map((e) => [e.field, e.code]);

describe('api › certificate trust anchors', () => {
  test('case=add, read, list and remove an anchor, each audited', async (t) => {
    const { h, realm, admin } = await setup(t);
    const ca = await makeRoot('Badge CA');
    const created = await admin.call('POST', '/certificate-trust-anchors', {
      description: 'Badges',
      certificate: ca.pem,
      multi_factor: true,
      user_mapping: { source: 'san_upn', identifier: 'email' },
    });
    assert.equal(created.status, 201, await created.clone().text());
    const body = (await created.json()) as Record<string, unknown>;
    assert.match(String(body.id), /^cta_[0-9a-z]{26}$/);
    assert.equal(
      created.headers.get('location'),
      `/api/v1/realms/${realm.name}/certificate-trust-anchors/${body.id}`,
    );
    assert.equal(body.subject, 'CN=Badge CA, O=ProudAuth Tests');
    assert.equal(body.multi_factor, true);
    assert.deepEqual(body.user_mapping, { source: 'san_upn', identifier: 'email' });
    assert.match(String(body.fingerprint_sha256), /^[0-9a-f]{64}$/);
    assert.deepEqual(await (await admin.call('GET', `/certificate-trust-anchors/${body.id}`)).json(), body);
    const list = (await (await admin.call('GET', '/certificate-trust-anchors')).json()) as {
      items: unknown[];
    };
    assert.deepEqual(list.items, [body]);
    // The same CA again is a conflict.
    const again = await admin.call('POST', '/certificate-trust-anchors', {
      description: 'x',
      certificate: ca.pem,
    });
    assert.equal(again.status, 409);
    assert.equal((await admin.call('DELETE', `/certificate-trust-anchors/${body.id}`)).status, 204);
    assert.equal((await admin.call('DELETE', `/certificate-trust-anchors/${body.id}`)).status, 404);
    assert.equal((await admin.call('GET', `/certificate-trust-anchors/${body.id}`)).status, 404);
    assert.equal((await audits(h, realm, 'certificate_trust_anchor.added')).length, 1);
    assert.equal((await audits(h, realm, 'certificate_trust_anchor.removed')).length, 1);
  });

  test('case=defaults: single-factor, SAN email to the email identifier', async (t) => {
    const { admin } = await setup(t);
    const created = await admin.call('POST', '/certificate-trust-anchors', {
      description: 'Plain',
      certificate: (await makeRoot('Plain CA')).pem,
    });
    const body = (await created.json()) as Record<string, unknown>;
    assert.equal(body.multi_factor, false);
    assert.deepEqual(body.user_mapping, { source: 'san_email', identifier: 'email' });
  });

  test('case=only one unexpired CA certificate is an anchor; unknown mappings are refused', async (t) => {
    const { admin } = await setup(t);
    const post = (certificate: string, extra: Record<string, unknown> = {}) =>
      admin.call('POST', '/certificate-trust-anchors', { description: 'x', certificate, ...extra });
    const root = await makeRoot('Issuer');
    const cases: [string, string][] = [
      [(await makeRoot('Expired CA', { expired: true })).pem, 'expired'],
      [(await makeRoot('Not a CA', { ca: false })).pem, 'not_ca'],
      [(await issueUserCertificate(root, { emails: ['a@example.com'] })).certPem, 'not_ca'],
      ['not a certificate', 'pattern'],
      [`${root.pem}\n${root.pem}`, 'pattern'],
    ];
    for (const [pem, code] of cases) {
      const r = await post(pem);
      assert.equal(r.status, 422, code);
      assert.deepEqual(await fieldCodes(r), [['certificate', code]]);
    }
    const mapping = await post(root.pem, { user_mapping: { source: 'serial_number', identifier: 'email' } });
    assert.equal(mapping.status, 422);
    const unknownMember = await post(root.pem, { trusted: true });
    assert.equal(unknownMember.status, 400);
    assert.equal((await admin.call('GET', '/certificate-trust-anchors/cta_nope')).status, 404);
  });

  test('case=a realm holds at most 50 anchors', async (t) => {
    const { h, realm, admin } = await setup(t);
    await h.ctx.db.query(
      `insert into certificate_trust_anchors (realm_id, id, description, certificate, subject, fingerprint_sha256,
         multi_factor, mapping_source, mapping_identifier, not_after, created_at)
       select $1, 'cta_' || lpad(n::text, 26, '0'), 'seeded', 'pem', 'CN=seeded', md5(n::text), false,
         'san_email', 'email', now() + interval '1 year', now()
       from generate_series(1, 50) n`,
      [realm.id],
    );
    const r = await admin.call('POST', '/certificate-trust-anchors', {
      description: 'one more',
      certificate: (await makeRoot('One more')).pem,
    });
    assert.equal(r.status, 409);
  });
});
