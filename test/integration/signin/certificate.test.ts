// X.509 certificate sign-in (docs/certificate-signin.md; spec doc 1, the certificate step,
// login.certificates, evaluation order 2 and 5, the phishing-resistant profile) over real TLS: a
// client presents a certificate from a test CA to the mutual-TLS listener, or a trusted proxy
// forwards one. Every refusal checks that nothing was issued and that a failure was recorded.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { makeIntermediate, makeRoot, type TestCa } from '../../harness/attestation-ca.ts';
import {
  clientCertHeader,
  mtlsFetch,
  selfSignedCertificate,
  startMtlsListener,
  type TestCertificate,
} from '../../harness/mtls-kit.ts';
import { json, newVerifier, startBody } from '../../harness/signin-driver.ts';
import {
  actionTypes,
  audits,
  issuedSoFar,
  PASSWORD,
  REDIRECT,
  sessionOfTx,
  signinSetup,
  txRow,
} from '../../harness/signin-kit.ts';
import { issueUserCertificate, type UserCertificateOptions } from '../../harness/user-certificates.ts';

const ALICE = 'alice@example.com';

async function setup(
  t: TestContext,
  opts: { overrides?: Record<string, unknown>; certificates?: boolean } = {},
) {
  const s = await signinSetup(t, { ...(opts.overrides ? { overrides: opts.overrides } : {}) });
  await s.h.setPolicy(s.realm, { login: { certificates: opts.certificates ?? true } });
  const admin = await apiCaller(s.h, s.realm);
  // The administrator's own sign-in above issued a code and a session; later ones are the test's.
  const before = await issuedSoFar(s.h, s.realm);
  const nothingIssued = async () => {
    const { transactions: _b, ...was } = before;
    const { transactions: _n, ...now } = await issuedSoFar(s.h, s.realm);
    assert.deepEqual(now, was, 'nothing issued');
  };
  const server = await selfSignedCertificate('localhost', '127.0.0.1');
  const { url } = await startMtlsListener(t, s.h, server);
  const ca = await makeRoot('Test Badge CA');
  const anchor = (issuer: TestCa, extra: Record<string, unknown> = {}) =>
    admin.call('POST', '/certificate-trust-anchors', {
      description: 'Badge CA',
      certificate: issuer.pem,
      ...extra,
    });
  const issue = (o: UserCertificateOptions = { emails: [ALICE] }, issuer: TestCa = ca) =>
    issueUserCertificate(issuer, o);
  /** A headless transaction whose every call goes to the mutual-TLS listener with `cert`. */
  const start = async (cert: TestCertificate | null, extra: Record<string, unknown> = {}) => {
    const f = mtlsFetch(t, server, cert ?? undefined);
    const started = await json(
      await f(`${url}/api/v1/realms/${s.realm.name}/auth/transactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(startBody('web-app', REDIRECT, newVerifier(), extra)),
      }),
    );
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const id: string = started.body.transaction_id;
    const headers = {
      'content-type': 'application/json',
      'x-transaction-token': started.body.continuation_token,
    };
    const base = `${url}/api/v1/realms/${s.realm.name}/auth/transactions/${id}`;
    return {
      id,
      start: started,
      step: async (path: string, body: unknown = {}) =>
        json(await f(`${base}/${path}`, { method: 'POST', headers, body: JSON.stringify(body) })),
    };
  };
  return { ...s, admin, ca, anchor, issue, start, nothingIssued };
}

const refusals = async (s: Awaited<ReturnType<typeof setup>>) =>
  (await audits(s.h, s.realm, 'signin.proof_failed')).map((a) => [a.data.factor, a.data.reason]);

describe('sign-in › certificate', () => {
  test('case=a certificate from a single-factor anchor signs the user in as a primary factor/mode=headless', async (t) => {
    const s = await setup(t);
    assert.equal((await s.anchor(s.ca)).status, 201);
    const tx = await s.start(await s.issue());
    assert.ok(actionTypes(tx.start.body.state).includes('certificate'));
    const done = await tx.step('certificate');
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.status, 'completed');
    assert.deepEqual(done.body.completed_factors, ['x509']);
    const session = await sessionOfTx(s.h, s.realm.id, tx.id);
    assert.deepEqual([session?.acr, session?.mfa, session?.user_id], ['basic', false, s.user.id]);
  });

  test('case=a single-factor certificate leaves required MFA to be done/mode=headless', async (t) => {
    const s = await setup(t);
    await s.h.setPolicy(s.realm, { mfa: { requirement: 'required' } });
    await s.anchor(s.ca);
    const tx = await s.start(await s.issue());
    const after = await tx.step('certificate');
    assert.equal(after.body.status, 'pending');
    assert.deepEqual(after.body.completed_factors, ['x509']);
    // Alice has no second factor yet: she must enroll one.
    assert.deepEqual(actionTypes(after.body).sort(), ['enroll_totp', 'enroll_webauthn']);
    assert.equal((await txRow(s.h, s.realm, tx.id)).certificate_multi_factor, false);
    await s.nothingIssued();
  });

  test('case=a multi-factor anchor satisfies MFA and the phishing-resistant profile/mode=headless', async (t) => {
    const s = await setup(t);
    await s.h.setPolicy(s.realm, { mfa: { requirement: 'required' } });
    const created = await s.anchor(s.ca, { multi_factor: true });
    assert.equal(created.status, 201);
    const tx = await s.start(await s.issue(), { acr_values: 'phishing_resistant' });
    const done = await tx.step('certificate');
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.deepEqual(done.body.completed_factors, ['x509']);
    const session = await sessionOfTx(s.h, s.realm.id, tx.id);
    assert.deepEqual([session?.acr, session?.mfa], ['phishing_resistant', true]);
    assert.deepEqual(session?.amr, ['x509']);
  });

  test('case=a single-factor certificate does not meet the phishing-resistant profile/mode=headless', async (t) => {
    const s = await setup(t);
    await s.anchor(s.ca);
    const tx = await s.start(await s.issue(), { acr_values: 'phishing_resistant' });
    const after = await tx.step('certificate');
    assert.equal(after.body.status, 'pending');
    assert.deepEqual(actionTypes(after.body), ['enroll_webauthn']);
    await s.nothingIssued();
  });

  test('case=the anchor that issued the certificate decides, under a root anchor too/mode=headless', async (t) => {
    const s = await setup(t);
    const issuing = await makeIntermediate(s.ca, 'Test Smart Card CA');
    await s.anchor(s.ca);
    await s.anchor(issuing, { multi_factor: true });
    const tx = await s.start(await s.issue({ emails: [ALICE] }, issuing), {
      acr_values: 'phishing_resistant',
    });
    const done = await tx.step('certificate');
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.equal((await sessionOfTx(s.h, s.realm.id, tx.id))?.acr, 'phishing_resistant');
  });

  test('case=after a password, a multi-factor certificate is the second factor/mode=headless', async (t) => {
    const s = await setup(t);
    await s.h.setPolicy(s.realm, { mfa: { requirement: 'required' } });
    await s.anchor(s.ca, { multi_factor: true });
    const tx = await s.start(await s.issue());
    const afterPassword = await tx.step('password', { password: PASSWORD, identifier: ALICE });
    assert.deepEqual(actionTypes(afterPassword.body).sort(), [
      'certificate',
      'enroll_totp',
      'enroll_webauthn',
    ]);
    const done = await tx.step('certificate');
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.deepEqual(done.body.completed_factors, ['pwd', 'x509']);
    const session = await sessionOfTx(s.h, s.realm.id, tx.id);
    assert.deepEqual([session?.acr, session?.mfa], ['phishing_resistant', true]);
  });

  test('case=after a password, a single-factor certificate leaves MFA to be done/mode=headless', async (t) => {
    const s = await setup(t);
    await s.h.setPolicy(s.realm, { mfa: { requirement: 'required' } });
    await s.anchor(s.ca);
    const tx = await s.start(await s.issue());
    await tx.step('password', { password: PASSWORD, identifier: ALICE });
    const after = await tx.step('certificate');
    assert.equal(after.body.status, 'pending');
    assert.deepEqual(after.body.completed_factors, ['pwd', 'x509']);
    assert.deepEqual(actionTypes(after.body).sort(), ['enroll_totp', 'enroll_webauthn']);
    await s.nothingIssued();
  });

  test('case=refusals are failed proofs with their reason, and nothing is issued/mode=headless', async (t) => {
    const s = await setup(t);
    await s.anchor(s.ca);
    const unknownCa = await makeRoot('Someone Else CA');
    const cases: [string, TestCertificate][] = [
      ['outside_validity', await s.issue({ emails: [ALICE], expired: true })],
      ['no_path', await s.issue({ emails: [ALICE] }, unknownCa)],
      ['no_matching_account', await s.issue({ emails: ['nobody@example.com'] })],
      ['no_identity', await s.issue({ emails: [], cn: ALICE })],
      ['ambiguous_identity', await s.issue({ emails: [ALICE, 'bob@example.com'] })],
      ['not_for_client_auth', await s.issue({ emails: [ALICE], extendedKeyUsage: ['1.3.6.1.5.5.7.3.4'] })],
    ];
    for (const [reason, cert] of cases) {
      const tx = await s.start(cert);
      const refused = await tx.step('certificate');
      assert.equal(refused.status, 200, reason);
      assert.deepEqual([refused.body.status, refused.body.completed_factors], ['pending', []], reason);
      assert.equal((await txRow(s.h, s.realm, tx.id)).failures, 1, reason);
    }
    assert.deepEqual(
      await refusals(s),
      cases.map(([reason]) => ['x509', reason]),
    );
    await s.nothingIssued();
  });

  test('case=an unverified email address is no mapping/mode=headless', async (t) => {
    const s = await setup(t);
    await s.h.createUser(s.realm, {
      email: 'carol@example.com',
      password: 'another-horse-9',
      emailVerified: false,
    });
    await s.anchor(s.ca);
    const tx = await s.start(await s.issue({ emails: ['carol@example.com'] }));
    assert.equal((await tx.step('certificate')).body.status, 'pending');
    assert.deepEqual(await refusals(s), [['x509', 'no_matching_account']]);
    await s.nothingIssued();
  });

  test('case=a certificate for another account than the identified one is refused/mode=headless', async (t) => {
    const s = await setup(t);
    await s.h.createUser(s.realm, { email: 'bob@example.com', password: 'another-horse-9' });
    await s.anchor(s.ca);
    const tx = await s.start(await s.issue());
    const identified = await tx.step('identify', { identifier: 'bob@example.com' });
    assert.ok(actionTypes(identified.body).includes('certificate'), JSON.stringify(identified.body));
    assert.equal((await tx.step('certificate')).body.status, 'pending');
    assert.deepEqual(await refusals(s), [['x509', 'other_account']]);
  });

  test('case=a subject common name can map to a username/mode=headless', async (t) => {
    const s = await setup(t);
    await s.h.createUser(s.realm, { username: 'dave.k', password: 'another-horse-9' });
    const created = await s.anchor(s.ca, { user_mapping: { source: 'subject_cn', identifier: 'username' } });
    assert.equal(created.status, 201, await created.clone().text());
    const tx = await s.start(await s.issue({ cn: 'Dave.K' }));
    const done = await tx.step('certificate');
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
  });

  test('case=a UPN in the subjectAltName maps to an email identifier/mode=headless', async (t) => {
    const s = await setup(t);
    await s.anchor(s.ca, { user_mapping: { source: 'san_upn', identifier: 'email' } });
    const tx = await s.start(await s.issue({ upn: ALICE }));
    assert.equal((await tx.step('certificate')).body.status, 'completed');
  });

  test('case=not offered with login.certificates off, without anchors or without a certificate/mode=headless', async (t) => {
    const s = await setup(t, { certificates: false });
    const cert = await s.issue();
    // No anchor yet, flag off.
    let tx = await s.start(cert);
    assert.ok(!actionTypes(tx.start.body.state).includes('certificate'));
    await s.anchor(s.ca);
    tx = await s.start(cert);
    assert.ok(!actionTypes(tx.start.body.state).includes('certificate'));
    const refused = await tx.step('certificate');
    assert.deepEqual([refused.status, refused.body.code], [409, 'conflict']);
    // Flag on, but the request presents no certificate.
    await s.h.setPolicy(s.realm, { login: { certificates: true } });
    tx = await s.start(null);
    assert.ok(!actionTypes(tx.start.body.state).includes('certificate'));
    assert.equal((await tx.step('certificate')).status, 409);
    // Over the plain listener a Client-Cert header from an untrusted peer counts for nothing.
    const plain = await json(
      await s.h.get(`/api/v1/realms/${s.realm.name}/auth/transactions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'client-cert': clientCertHeader(cert) },
        body: JSON.stringify(startBody('web-app', REDIRECT, newVerifier())),
      }),
    );
    assert.ok(!actionTypes(plain.body.state).includes('certificate'));
    await s.nothingIssued();
  });

  test('case=a trusted proxy forwards the certificate in Client-Cert/mode=headless', async (t) => {
    const s = await setup(t, { overrides: { 'server.trusted_proxies': '127.0.0.1/32' } });
    await s.anchor(s.ca);
    const cert = await s.issue();
    const forwarded = { 'content-type': 'application/json', 'client-cert': clientCertHeader(cert) };
    const started = await json(
      await s.h.get(`/api/v1/realms/${s.realm.name}/auth/transactions`, {
        method: 'POST',
        headers: forwarded,
        body: JSON.stringify(startBody('web-app', REDIRECT, newVerifier())),
      }),
    );
    assert.ok(actionTypes(started.body.state).includes('certificate'));
    const done = await json(
      await s.h.get(
        `/api/v1/realms/${s.realm.name}/auth/transactions/${started.body.transaction_id}/certificate`,
        {
          method: 'POST',
          headers: { ...forwarded, 'x-transaction-token': started.body.continuation_token },
          body: '{}',
        },
      ),
    );
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.deepEqual(done.body.completed_factors, ['x509']);
  });
});
