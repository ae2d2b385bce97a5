import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { loadConfig } from '../config/load.ts';
import { generateRootKey, KeyringError, loadKeyrings, PepperRing, RootKeyring } from './keyring.ts';
import { SecretRefError } from './secret-ref.ts';

const k1 = randomBytes(32);
const k2 = randomBytes(32);
const ring1 = RootKeyring.fromKeys(new Map([[1, k1]]), 1);
const ring12 = RootKeyring.fromKeys(
  new Map([
    [1, k1],
    [2, k2],
  ]),
  2,
);

describe('RootKeyring', () => {
  test('case=round trip with the sealed format', () => {
    const sealed = ring1.encrypt('totp-seed', 'JBSWY3DPEHPK3PXP', 'rlm_1/cred_1');
    assert.match(sealed, /^pa1\.1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+$/);
    assert.equal(ring1.decrypt('totp-seed', sealed, 'rlm_1/cred_1').toString(), 'JBSWY3DPEHPK3PXP');
    const bin = randomBytes(100);
    assert.deepEqual(ring1.decrypt('job-result', ring1.encrypt('job-result', bin, 'a'), 'a'), bin);
    assert.notEqual(ring1.encrypt('totp-seed', 'x', 'a'), ring1.encrypt('totp-seed', 'x', 'a'));
  });

  test('case=wrong purpose, aad or key fails', () => {
    const sealed = ring1.encrypt('webhook-secret', 'whsec', 'rlm_1/wh_1');
    assert.throws(() => ring1.decrypt('hook-secret', sealed, 'rlm_1/wh_1'), KeyringError);
    assert.throws(() => ring1.decrypt('webhook-secret', sealed, 'rlm_2/wh_1'), /failed authentication/);
    const other = RootKeyring.fromKeys(new Map([[1, randomBytes(32)]]), 1);
    assert.throws(() => other.decrypt('webhook-secret', sealed, 'rlm_1/wh_1'), /failed authentication/);
  });

  test('case=an old version still decrypts after a new one becomes active', () => {
    const old = ring1.encrypt('signing-key', 'pem', 'rlm_1/kid_1');
    assert.equal(ring12.decrypt('signing-key', old, 'rlm_1/kid_1').toString(), 'pem');
    const fresh = ring12.encrypt('signing-key', 'pem2', 'rlm_1/kid_2');
    assert.match(fresh, /^pa1\.2\./);
    assert.throws(() => ring1.decrypt('signing-key', fresh, 'rlm_1/kid_2'), {
      message: 'sealed value needs root key version 2, which is not configured',
    });
  });

  test('case=tampering is detected', () => {
    const sealed = ring1.encrypt('mail-secret', 'smtp-password', 'rlm_1');
    const [p, v, iv, body] = sealed.split('.') as [string, string, string, string];
    const flip = (s: string) => {
      const b = Buffer.from(s, 'base64url');
      b[0]! ^= 1;
      return b.toString('base64url');
    };
    for (const bad of [
      [p, v, flip(iv), body].join('.'),
      [p, v, iv, flip(body)].join('.'),
      [p, v, iv, body.slice(0, -4)].join('.'),
    ]) {
      assert.throws(() => ring1.decrypt('mail-secret', bad, 'rlm_1'), KeyringError);
    }
    for (const bad of [
      '',
      'pa2.1.x.y',
      `pa1.01.${iv}.${body}`,
      `pa1.1.${iv}`,
      `pa1.1.${iv}.${body}.x`,
      `pa1.1.AAAA.${body}`,
    ]) {
      assert.throws(() => ring1.decrypt('mail-secret', bad, 'rlm_1'), /malformed/);
    }
  });

  test('case=fingerprints are stable, distinct and not the key', () => {
    const again = RootKeyring.fromKeys(new Map([[1, Buffer.from(k1)]]), 1);
    assert.deepEqual(ring1.fingerprints(), again.fingerprints());
    const fps = ring12.fingerprints();
    assert.deepEqual(
      fps.map((f) => f.version),
      [1, 2],
    );
    assert.match(fps[0]!.fingerprint, /^[0-9a-f]{16}$/);
    assert.notEqual(fps[0]!.fingerprint, fps[1]!.fingerprint);
    assert.ok(!k1.toString('hex').includes(fps[0]!.fingerprint));
    assert.equal(ring12.activeVersion, 2);
    assert.deepEqual(ring12.versions(), [1, 2]);
  });

  test('case=construction checks key length and the active version', () => {
    assert.throws(() => RootKeyring.fromKeys(new Map([[1, randomBytes(16)]]), 1), /must be 32 bytes/);
    assert.throws(
      () => RootKeyring.fromKeys(new Map([[1, k1]]), 2),
      /active root key version 2 is not loaded/,
    );
    assert.throws(() => RootKeyring.fromKeys(new Map([[0, k1]]), 0), /version 0 is invalid/);
  });

  test('case=macKey is per purpose and version, stable, and refuses an unknown version', () => {
    const mac = (ring: RootKeyring, version?: number) =>
      createHmac('sha256', ring.macKey('client-secret', version)).update('pa_cs_x').digest('hex');
    const again = RootKeyring.fromKeys(new Map([[1, Buffer.from(k1)]]), 1);
    assert.equal(mac(ring1), mac(again));
    assert.equal(mac(ring1), mac(ring12, 1));
    assert.equal(mac(ring12), mac(ring12, 2));
    assert.notEqual(mac(ring12, 1), mac(ring12, 2));
    // Not the root key itself, and not the HMAC a bare root key would give.
    assert.notEqual(mac(ring1), createHmac('sha256', k1).update('pa_cs_x').digest('hex'));
    assert.equal(ring1.macKey('client-secret').symmetricKeySize, 32);
    assert.throws(() => ring1.macKey('client-secret', 2), {
      name: 'KeyringError',
      message: 'root key version 2 is not configured',
    });
  });

  test('case=generateRootKey gives 32 random bytes as base64', () => {
    const a = generateRootKey();
    assert.equal(Buffer.from(a, 'base64').length, 32);
    assert.notEqual(a, generateRootKey());
  });
});

describe('PepperRing', () => {
  test('case=apply is HMAC-SHA-256 per version', () => {
    const p = PepperRing.fromKeys(
      new Map([
        [1, Buffer.alloc(32, 1)],
        [2, Buffer.alloc(32, 2)],
      ]),
      2,
    );
    assert.equal(p.activeVersion, 2);
    const a = p.apply('correct-horse-9', 1);
    assert.equal(a.length, 32);
    assert.deepEqual(a, p.apply('correct-horse-9', 1));
    assert.notDeepEqual(a, p.apply('correct-horse-9', 2));
    assert.notDeepEqual(a, p.apply('correct-horse-8', 1));
    const expected = createHmac('sha256', Buffer.alloc(32, 1)).update('pässword', 'utf8').digest();
    assert.deepEqual(p.apply('pässword', 1), expected);
    assert.throws(() => p.apply('x', 3), /pepper version 3 is not configured/);
    assert.equal(p.fingerprints().length, 2);
    assert.notEqual(p.fingerprints()[0]!.fingerprint, p.fingerprints()[1]!.fingerprint);
  });

  test('case=pepper is optional', () => {
    const p = PepperRing.fromKeys(new Map(), null);
    assert.equal(p.activeVersion, null);
    assert.deepEqual(p.fingerprints(), []);
    assert.throws(() => PepperRing.fromKeys(new Map([[1, k1]]), null), /none is active/);
  });
});

describe('loadKeyrings', () => {
  const dir = mkdtempSync(join(tmpdir(), 'proudauth-keyring-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('case=resolves every reference and reports the key provider', async () => {
    writeFileSync(join(dir, 'root-1'), `${k1.toString('hex')}\n`);
    writeFileSync(join(dir, 'root-2.wrapped'), k2.toString('base64'));
    const env = { PEPPER: Buffer.alloc(32, 7).toString('base64url') };
    const config = loadConfig({
      env: {},
      overrides: {
        'keys.root.1': `file:${join(dir, 'root-1')}`,
        'keys.root.2': `kms:${join(dir, 'root-2.wrapped')}`,
        'keys.active_version': 2,
        'keys.pepper.1': 'env:PEPPER',
        'keys.pepper_active_version': 1,
        'keys.kms.command': 'cat',
      },
    });
    const rings = await loadKeyrings(config, env);
    assert.equal(rings.keyProvider, 'kms_unwrapped');
    assert.deepEqual(rings.root?.versions(), [1, 2]);
    assert.equal(
      rings.root?.decrypt('totp-seed', ring12.encrypt('totp-seed', 's', 'a'), 'a').toString(),
      's',
    );
    assert.equal(rings.pepper.activeVersion, 1);
  });

  test('case=no keys gives no root keyring and software provider', async () => {
    const rings = await loadKeyrings(loadConfig({ env: {} }), {});
    assert.equal(rings.root, null);
    assert.equal(rings.keyProvider, 'software');
  });

  test('case=any unresolved reference stops start-up', async () => {
    const config = loadConfig({
      env: {},
      overrides: { 'keys.root.1': 'env:MISSING', 'keys.active_version': 1 },
    });
    await assert.rejects(loadKeyrings(config, {}), SecretRefError);
    const prod = loadConfig({
      env: {},
      overrides: {
        environment: 'production',
        'server.public_origin': 'https://id.example.com',
        'keys.root.1': k1.toString('hex'),
        'keys.active_version': 1,
      },
    });
    await assert.rejects(loadKeyrings(prod, {}), /keys\.root\.1: literal keys are refused in production/);
  });
});
