// Passkey attestation trust beyond the happy path (spec doc 1, Passkey policy 1): certificate
// paths that break an RFC 5280 rule are refused at registration, and the operator's FIDO
// metadata ages by its nextUpdate date: warned about on /status and in the log once it is stale,
// no longer trusted once the grace period (webauthn.metadata_grace_period) is over.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { KeyUsageFlags } from '@peculiar/x509';
import { createLogger } from '../../../src/platform/log.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import {
  makeAttestationLeaf,
  makeIntermediate,
  makeMetadataBlob,
  makeRoot,
  type TestCa,
} from '../../harness/attestation-ca.ts';
import { enrollInTransaction } from '../../harness/passkey-kit.ts';
import { movableClock, signinSetup } from '../../harness/signin-kit.ts';
import { SoftAuthenticator } from '../../harness/soft-authenticator.ts';

const MODEL = '11111111-2222-3333-4444-555555555555';
const TRUSTED = { attestation: 'direct', require_trusted_attestation: true } as const;
const DAY = 86_400_000;

type Refusal = { status: number; body: { code?: string; errors?: { code: string; detail?: string }[] } };
const refusalOf = (r: Refusal) => `${r.status} ${r.body.errors?.[0]?.code ?? r.body.code}`;

describe('passkeys › attestation certificate paths', () => {
  test('case=chains that break a path rule are refused as untrusted, naming the rule', async (t) => {
    const { h, realm } = await signinSetup(t, { clock: movableClock() });
    await h.setPolicy(realm, { mfa: { requirement: 'required' }, webauthn: TRUSTED });
    const admin = await apiCaller(h, realm);
    const authenticator = new SoftAuthenticator(h.ctx.config.server.publicOrigin);
    const root = await makeRoot('Realm Root', { pathLen: 1 });
    const created = await admin.call('POST', '/webauthn/trusted-authenticators', {
      aaguid: MODEL,
      description: 'Test key',
      root_certificates: [root.pem],
    });
    assert.equal(created.status, 201);

    const good = await makeIntermediate(root, 'Good');
    const signOnly = await makeIntermediate(root, 'Sign only', { keyUsage: KeyUsageFlags.digitalSignature });
    const notCa = await makeIntermediate(root, 'Not a CA', { ca: false });
    const expired = await makeIntermediate(root, 'Expired', { expired: true });
    const deeper = await makeIntermediate(good, 'One too deep');
    const cases: [string, TestCa, TestCa[]][] = [
      ['issuer_cannot_sign_certificates', await makeAttestationLeaf(signOnly, MODEL), [signOnly]],
      ['issuer_not_ca', await makeAttestationLeaf(notCa, MODEL), [notCa]],
      ['path_length_exceeded', await makeAttestationLeaf(deeper, MODEL), [deeper, good]],
      ['outside_validity', await makeAttestationLeaf(expired, MODEL), [expired]],
      ['no_path', await makeAttestationLeaf(await makeRoot('Unrelated'), MODEL), []],
    ];
    for (const [problem, leaf, chain] of cases) {
      const r = await enrollInTransaction(h, realm, authenticator, {
        aaguid: MODEL,
        attestation: { kind: 'packed', leaf, chain },
      });
      assert.equal(refusalOf(r.registered), '422 attestation_not_trusted', problem);
      assert.match(r.registered.body.errors?.[0]?.detail ?? '', new RegExp(problem), problem);
    }
    // A leaf that claims to be a CA: the ceremony library already refuses it for packed (WebAuthn
    // 8.2.1), before trust is evaluated; the path check refuses it for every format.
    const caLeaf = await enrollInTransaction(h, realm, authenticator, {
      aaguid: MODEL,
      attestation: {
        kind: 'packed',
        leaf: await makeAttestationLeaf(good, MODEL, { ca: true }),
        chain: [good],
      },
    });
    assert.equal(caLeaf.registered.status, 422);
    const ok = await enrollInTransaction(h, realm, authenticator, {
      aaguid: MODEL,
      attestation: { kind: 'packed', leaf: await makeAttestationLeaf(good, MODEL), chain: [good] },
    });
    assert.equal(ok.registered.body.status, 'completed', JSON.stringify(ok.registered.body));
  });

  test('case=a trusted authenticator root without keyCertSign, or without keyUsage at all, is refused', async (t) => {
    const { h, realm } = await signinSetup(t, { client: null, user: null });
    const admin = await apiCaller(h, realm);
    const r = await admin.call('POST', '/webauthn/trusted-authenticators', {
      aaguid: MODEL,
      description: 'Test key',
      root_certificates: [
        (await makeRoot('No keyCertSign', { keyUsage: KeyUsageFlags.cRLSign })).pem,
        (await makeRoot('No keyUsage', { keyUsage: null })).pem,
      ],
    });
    assert.equal(r.status, 422);
    const body = (await r.json()) as { errors: { field: string; code: string }[] };
    assert.deepEqual(
      body.errors.map((e) => `${e.field}:${e.code}`),
      ['root_certificates.0:not_ca', 'root_certificates.1:not_ca'],
    );
  });
});

function logLines() {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  const lines = () =>
    chunks
      .join('')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { level: number; msg: string; next_update?: string });
  return { log: createLogger('info', sink), lines };
}

describe('passkeys › FIDO metadata freshness', () => {
  test('case=stale metadata warns on /status and once in the log; past the grace period it trusts nothing', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-mds-'));
    const mdsRoot = await makeRoot('Test MDS Root');
    const vendorRoot = await makeRoot('Vendor Root');
    const blobFile = join(dir, 'blob.jwt');
    const rootFile = join(dir, 'root.pem');
    const clock = movableClock();
    const dateIn = (days: number) => new Date(clock.now().getTime() + days * DAY).toISOString().slice(0, 10);
    const nextUpdate = dateIn(2);
    writeFileSync(rootFile, mdsRoot.pem);
    writeFileSync(
      blobFile,
      await makeMetadataBlob(mdsRoot, [{ aaguid: MODEL, roots: [vendorRoot] }], { nextUpdate }),
    );
    const out = logLines();
    const { h, realm } = await signinSetup(t, {
      clock,
      log: out.log,
      overrides: {
        'webauthn.metadata_blob': blobFile,
        'webauthn.metadata_root': rootFile,
        'webauthn.metadata_grace_period': '3d',
      },
    });
    await h.setPolicy(realm, { mfa: { requirement: 'required' }, webauthn: TRUSTED });
    const authenticator = new SoftAuthenticator(h.ctx.config.server.publicOrigin);
    const leaf = await makeAttestationLeaf(vendorRoot, MODEL);
    const enroll = async () => {
      await h.ctx.db.query('delete from webauthn_credentials where realm_id = $1', [realm.id]);
      const r = await enrollInTransaction(h, realm, authenticator, {
        aaguid: MODEL,
        attestation: { kind: 'packed', leaf },
      });
      return r.registered.body.status === 'completed' ? 'completed' : refusalOf(r.registered);
    };
    const status = async () => {
      const body = (await (await h.internal('/status')).json()) as Record<string, unknown>;
      return body.fido_metadata as { state: string; next_update: string; trusted_until: string };
    };
    const warnings = () => out.lines().filter((l) => l.level === 40 && /nextUpdate/.test(l.msg));

    assert.equal(await enroll(), 'completed');
    const current = await status();
    assert.equal(current.state, 'current');
    assert.equal(current.next_update, nextUpdate);
    assert.equal(current.trusted_until, new Date(Date.parse(nextUpdate) + 3 * DAY).toISOString());
    assert.equal(warnings().length, 0);

    clock.advance(3 * DAY); // past nextUpdate, inside the grace period
    assert.equal(await enroll(), 'completed', 'stale metadata is still used');
    assert.equal(await enroll(), 'completed');
    assert.equal((await status()).state, 'stale');
    assert.equal(warnings().length, 1, 'one warning for the stale BLOB, not one per request');
    assert.equal(warnings()[0]?.next_update, nextUpdate);

    clock.advance(3 * DAY); // past the grace period
    assert.equal(await enroll(), '422 attestation_not_trusted');
    assert.equal(await enroll(), '422 attestation_not_trusted');
    assert.equal((await status()).state, 'expired');
    assert.equal(warnings().length, 2, 'one more warning when it expires');

    // Installing a newer BLOB restores trust at once.
    writeFileSync(
      blobFile,
      await makeMetadataBlob(mdsRoot, [{ aaguid: MODEL, roots: [vendorRoot] }], { nextUpdate: dateIn(30) }),
    );
    assert.equal(await enroll(), 'completed');
    assert.equal((await status()).state, 'current');
  });

  test('case=no fido_metadata member without configured metadata; unavailable when the BLOB never verified', async (t) => {
    const plain = await signinSetup(t, { client: null, user: null });
    const body = (await (await plain.h.internal('/status')).json()) as Record<string, unknown>;
    assert.equal('fido_metadata' in body, false);

    const dir = mkdtempSync(join(tmpdir(), 'pa-mds-'));
    writeFileSync(join(dir, 'root.pem'), (await makeRoot('Configured Root')).pem);
    writeFileSync(join(dir, 'blob.jwt'), await makeMetadataBlob(await makeRoot('Impostor'), []));
    const { h } = await signinSetup(t, {
      client: null,
      user: null,
      overrides: {
        'webauthn.metadata_blob': join(dir, 'blob.jwt'),
        'webauthn.metadata_root': join(dir, 'root.pem'),
      },
    });
    const status = (await (await h.internal('/status')).json()) as Record<string, unknown>;
    assert.deepEqual(status.fido_metadata, {
      state: 'unavailable',
      next_update: null,
      trusted_until: null,
      entries: 0,
    });
    assert.equal(status.status, 'ok', 'the member does not change the capabilities or status');
  });
});
