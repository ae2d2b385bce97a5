// Passkey attestation trust (spec doc 1, Passkey policy 1; "Passkey trusted authenticators";
// Limits) with attestation objects built by the software authenticator and chains from a test
// CA: the trusted-authenticator API, every trust rule, the operator's FIDO metadata BLOB (checked
// against its root, re-read when the file changes, status reports honoured), and the related
// origins document.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import {
  makeAttestationLeaf,
  makeIntermediate,
  makeMetadataBlob,
  makeRoot,
  type TestCa,
} from '../../harness/attestation-ca.ts';
import { answerWithPasskey, enrollInTransaction } from '../../harness/passkey-kit.ts';
import { audits, movableClock, passwordSignIn, rows, signinSetup } from '../../harness/signin-kit.ts';
import { SoftAuthenticator, ZERO_AAGUID } from '../../harness/soft-authenticator.ts';

const MODEL = '11111111-2222-3333-4444-555555555555';
const TRUSTED = { attestation: 'direct', require_trusted_attestation: true } as const;

async function setup(t: TestContext, overrides: Record<string, unknown> = {}) {
  const s = await signinSetup(t, { clock: movableClock(), overrides });
  await s.h.setPolicy(s.realm, { mfa: { requirement: 'required' } });
  const admin = await apiCaller(s.h, s.realm);
  const authenticator = new SoftAuthenticator(s.h.ctx.config.server.publicOrigin);
  const root = await makeRoot();
  const trust = (aaguid: string, roots: TestCa[], description = 'Test key') =>
    admin.call('POST', '/webauthn/trusted-authenticators', {
      aaguid,
      description,
      root_certificates: roots.map((r) => r.pem),
    });
  return { ...s, admin, authenticator, root, trust };
}

/** GET with a Host header of the test's choice (fetch always sends the URL's host). */
function getWithHost(
  base: string,
  path: string,
  host: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, base), { headers: { host } }, (res) => {
      let body = '';
      res.on('data', (c) => {
        body += c;
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

const codeOf = (r: { body: { errors?: { code: string }[] } }) => r.body.errors?.[0]?.code;

describe('passkeys › attestation trust', () => {
  test('case=trusted authenticators: 201, 409 duplicate, validation, list, 204 delete keeps passkeys', async (t) => {
    const { h, realm, admin, root, trust, authenticator } = await setup(t);
    const created = await trust(MODEL, [root]);
    assert.equal(created.status, 201, await created.clone().text());
    const entry = (await created.json()) as { id: string };
    assert.match(entry.id, /^wta_/);
    assert.equal((await trust(MODEL, [root])).status, 409);
    const bad = await admin.call('POST', '/webauthn/trusted-authenticators', {
      aaguid: ZERO_AAGUID,
      description: 'x',
      root_certificates: [
        (await makeRoot('Expired', { expired: true })).pem,
        (await makeRoot('Not a CA', { ca: false })).pem,
        'nope',
      ],
    });
    assert.equal(bad.status, 422);
    const fields = ((await bad.json()) as { errors: { field: string; code: string }[] }).errors.map(
      (e: { field: string; code: string }) => `${e.field}:${e.code}`,
    );
    assert.deepEqual(fields, [
      'aaguid:pattern',
      'root_certificates.0:expired',
      'root_certificates.1:not_ca',
      'root_certificates.2:pattern',
    ]);
    const tooMany = await admin.call('POST', '/webauthn/trusted-authenticators', {
      aaguid: MODEL.replace('1111', '2222'),
      description: 'x',
      root_certificates: Array(11).fill(root.pem),
    });
    assert.equal(tooMany.status, 422, 'more than 10 certificates is a validation failure');
    const shortDescription = await admin.call('POST', '/webauthn/trusted-authenticators', {
      aaguid: MODEL.replace('1111', '2222'),
      description: '',
      root_certificates: [root.pem],
    });
    assert.equal(shortDescription.status, 422);
    const unknownMember = await admin.call('POST', '/webauthn/trusted-authenticators', {
      aaguid: MODEL.replace('1111', '2222'),
      description: 'x',
      root_certificates: [root.pem],
      vendor: 'x',
    });
    assert.equal(unknownMember.status, 400);
    const list = (await (await admin.call('GET', '/webauthn/trusted-authenticators')).json()) as {
      items: { aaguid: string }[];
    };
    assert.deepEqual(
      list.items.map((i: { aaguid: string }) => i.aaguid),
      [MODEL],
    );
    assert.equal((await audits(h, realm, 'webauthn.trusted_authenticator.added')).length, 1);

    await h.setPolicy(realm, { webauthn: TRUSTED });
    const leaf = await makeAttestationLeaf(root, MODEL);
    const r = await enrollInTransaction(h, realm, authenticator, {
      aaguid: MODEL,
      attestation: { kind: 'packed', leaf },
    });
    assert.equal(r.registered.body.status, 'completed', JSON.stringify(r.registered.body));
    assert.equal((await admin.call('DELETE', `/webauthn/trusted-authenticators/${entry.id}`)).status, 204);
    assert.equal((await admin.call('DELETE', `/webauthn/trusted-authenticators/${entry.id}`)).status, 404);
    assert.equal((await audits(h, realm, 'webauthn.trusted_authenticator.removed')).length, 1);
    const again = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const { verified } = await answerWithPasskey(again.tx, authenticator);
    assert.equal(verified.body.status, 'completed', 'an existing passkey keeps working');
  });

  test('case=more than 200 trusted authenticators answers 409', async (t) => {
    const { h, realm, root, trust } = await setup(t);
    for (let i = 0; i < 200; i++) {
      const aaguid = `${i.toString(16).padStart(8, '0')}-0000-0000-0000-000000000001`;
      await h.ctx.db.query(
        `insert into webauthn_trusted_authenticators (realm_id, id, aaguid, description, root_certificates, created_at)
         values ($1, $2, $3, 'bulk', $4, now())`,
        [realm.id, `wta_${String(i).padStart(26, '0')}`, aaguid, [root.pem]],
      );
    }
    assert.equal((await trust(MODEL, [root])).status, 409);
  });

  test('case=a chain to a realm root is trusted and recorded; none, self, other roots and zero AAGUID are not', async (t) => {
    const { h, realm, root, trust, authenticator } = await setup(t);
    await h.setPolicy(realm, { webauthn: TRUSTED });
    const none = await enrollInTransaction(h, realm, authenticator, { aaguid: MODEL });
    assert.equal(none.registered.status, 409, 'no trusted metadata at all');
    assert.equal(none.registered.body.code, 'feature_disabled');

    const intermediate = await makeIntermediate(root);
    await trust(MODEL, [root]);
    const leaf = await makeAttestationLeaf(intermediate, MODEL);
    const cases: [string, Parameters<SoftAuthenticator['create']>[1]][] = [
      ['none', { aaguid: MODEL }],
      ['self', { aaguid: MODEL, attestation: { kind: 'self' } }],
      [
        'other root',
        {
          aaguid: MODEL,
          attestation: { kind: 'packed', leaf: await makeAttestationLeaf(await makeRoot('Other'), MODEL) },
        },
      ],
      ['missing intermediate', { aaguid: MODEL, attestation: { kind: 'packed', leaf } }],
      [
        'unlisted model',
        {
          aaguid: MODEL.replace('1111', '3333'),
          attestation: {
            kind: 'packed',
            leaf: await makeAttestationLeaf(root, MODEL.replace('1111', '3333')),
          },
        },
      ],
    ];
    for (const [name, opts] of cases) {
      const r = await enrollInTransaction(h, realm, authenticator, opts);
      assert.equal(r.registered.status, 422, name);
      assert.equal(codeOf(r.registered), 'attestation_not_trusted', name);
    }
    const ok = await enrollInTransaction(h, realm, authenticator, {
      aaguid: MODEL,
      attestation: { kind: 'packed', leaf, chain: [intermediate] },
    });
    assert.equal(ok.registered.body.status, 'completed', JSON.stringify(ok.registered.body));
    const [row] = await rows(h, 'select * from webauthn_credentials where realm_id = $1', [realm.id]);
    assert.equal(row?.attestation_trusted, true);
    assert.equal(row?.attestation_source, 'realm');
    assert.equal(row?.attestation_format, 'packed');
  });

  test('case=turning the requirement on keeps existing passkeys', async (t) => {
    const { h, realm, authenticator } = await setup(t);
    await enrollInTransaction(h, realm, authenticator, { aaguid: MODEL });
    await h.ctx.db.query(
      `insert into webauthn_trusted_authenticators (realm_id, id, aaguid, description, root_certificates, created_at)
       values ($1, 'wta_00000000000000000000000000', $2, 'x', $3, now())`,
      [realm.id, MODEL, [(await makeRoot()).pem]],
    );
    await h.setPolicy(realm, { webauthn: TRUSTED });
    const { tx } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const { verified } = await answerWithPasskey(tx, authenticator);
    assert.equal(verified.body.status, 'completed');
  });

  test('case=operator FIDO metadata: verified BLOB trusts, status reports refuse, realm entry wins, reload', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-mds-'));
    const mdsRoot = await makeRoot('Test MDS Root');
    const vendorRoot = await makeRoot('Vendor Root');
    const revokedModel = MODEL.replace('1111', '4444');
    const blobFile = join(dir, 'blob.jwt');
    const rootFile = join(dir, 'root.pem');
    writeFileSync(rootFile, mdsRoot.pem);
    writeFileSync(
      blobFile,
      await makeMetadataBlob(mdsRoot, [
        { aaguid: MODEL, roots: [vendorRoot] },
        { aaguid: revokedModel, roots: [vendorRoot], statuses: ['FIDO_CERTIFIED', 'REVOKED'] },
      ]),
    );
    const { h, realm, trust, authenticator } = await setup(t, {
      'webauthn.metadata_blob': blobFile,
      'webauthn.metadata_root': rootFile,
    });
    await h.setPolicy(realm, { webauthn: TRUSTED });
    const leaf = await makeAttestationLeaf(vendorRoot, MODEL);
    const ok = await enrollInTransaction(h, realm, authenticator, {
      aaguid: MODEL,
      attestation: { kind: 'packed', leaf },
    });
    assert.equal(ok.registered.body.status, 'completed', JSON.stringify(ok.registered.body));
    const [row] = await rows(h, 'select attestation_source from webauthn_credentials where realm_id = $1', [
      realm.id,
    ]);
    assert.equal(row?.attestation_source, 'fido_metadata');
    // Each enrollment below is the account's first passkey again.
    const reset = () => h.ctx.db.query('delete from webauthn_credentials where realm_id = $1', [realm.id]);
    await reset();
    const revoked = await enrollInTransaction(h, realm, authenticator, {
      aaguid: revokedModel,
      attestation: { kind: 'packed', leaf: await makeAttestationLeaf(vendorRoot, revokedModel) },
    });
    assert.equal(codeOf(revoked.registered), 'attestation_not_trusted');

    // A realm entry for the same model wins: the operator's roots no longer count for it.
    const realmRoot = await makeRoot('Realm Root');
    await trust(MODEL, [realmRoot]);
    const vendorSigned = await enrollInTransaction(h, realm, authenticator, {
      aaguid: MODEL,
      attestation: { kind: 'packed', leaf },
    });
    assert.equal(codeOf(vendorSigned.registered), 'attestation_not_trusted');
    const realmSigned = await enrollInTransaction(h, realm, authenticator, {
      aaguid: MODEL,
      attestation: { kind: 'packed', leaf: await makeAttestationLeaf(realmRoot, MODEL) },
    });
    assert.equal(
      realmSigned.registered.body.status,
      'completed',
      JSON.stringify(realmSigned.registered.body),
    );
    await reset();

    // The file is re-read when it changes: the model reported revoked now is refused.
    const third = MODEL.replace('1111', '5555');
    const thirdLeaf = await makeAttestationLeaf(vendorRoot, third);
    const before = await enrollInTransaction(h, realm, authenticator, {
      aaguid: third,
      attestation: { kind: 'packed', leaf: thirdLeaf },
    });
    assert.equal(codeOf(before.registered), 'attestation_not_trusted', 'not in the BLOB yet');
    writeFileSync(blobFile, await makeMetadataBlob(mdsRoot, [{ aaguid: third, roots: [vendorRoot] }]));
    const after = await enrollInTransaction(h, realm, authenticator, {
      aaguid: third,
      attestation: { kind: 'packed', leaf: thirdLeaf },
    });
    assert.equal(after.registered.body.status, 'completed', JSON.stringify(after.registered.body));
  });

  test('case=a BLOB that does not chain to the configured root is not used', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-mds-'));
    const vendorRoot = await makeRoot('Vendor Root');
    const blobFile = join(dir, 'blob.jwt');
    const rootFile = join(dir, 'root.pem');
    writeFileSync(rootFile, (await makeRoot('Configured Root')).pem);
    writeFileSync(
      blobFile,
      await makeMetadataBlob(await makeRoot('Impostor'), [{ aaguid: MODEL, roots: [vendorRoot] }]),
    );
    const { h, realm, authenticator } = await setup(t, {
      'webauthn.metadata_blob': blobFile,
      'webauthn.metadata_root': rootFile,
    });
    await h.setPolicy(realm, { webauthn: TRUSTED });
    const r = await enrollInTransaction(h, realm, authenticator, {
      aaguid: MODEL,
      attestation: { kind: 'packed', leaf: await makeAttestationLeaf(vendorRoot, MODEL) },
    });
    assert.equal(r.registered.body.code, 'feature_disabled');
  });
});

describe('passkeys › related origins document', () => {
  const RELATED = ['https://shop.example.com', 'https://example.org'];

  test('case=404 while the operator switch is off', async (t) => {
    const { h } = await signinSetup(t, { client: null, user: null });
    const r = await getWithHost(h.publicUrl, '/.well-known/webauthn', 'localhost');
    assert.equal(r.status, 404);
  });

  test('case=served on the rp_id host with a 300 s cache; 404 for other hosts', async (t) => {
    const { h, realm } = await signinSetup(t, {
      client: null,
      user: null,
      overrides: { 'webauthn.related_origins': true },
    });
    await h.setPolicy(realm, {
      webauthn: { rp_id: 'localhost', origins: ['http://localhost:8080'], related_origins: RELATED },
    });
    const r = await getWithHost(h.publicUrl, '/.well-known/webauthn', 'localhost');
    assert.equal(r.status, 200);
    assert.equal(r.headers['cache-control'], 'public, max-age=300');
    assert.deepEqual(JSON.parse(r.body), { origins: [...RELATED].sort() });
    assert.equal((await getWithHost(h.publicUrl, '/.well-known/webauthn', 'elsewhere.example')).status, 404);
  });

  test('case=strict host policy answers 421 on other hosts', async (t) => {
    const { h, realm } = await signinSetup(t, {
      client: null,
      user: null,
      overrides: { 'webauthn.related_origins': true, 'server.host_policy': 'strict' },
    });
    await h.setPolicy(realm, {
      webauthn: { rp_id: 'localhost', origins: ['http://localhost:8080'], related_origins: RELATED },
    });
    assert.equal((await getWithHost(h.publicUrl, '/.well-known/webauthn', 'localhost:8080')).status, 200);
    assert.equal((await getWithHost(h.publicUrl, '/.well-known/webauthn', 'other.example')).status, 421);
  });
});
