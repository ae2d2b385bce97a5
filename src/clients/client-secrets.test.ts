import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { RootKeyring } from '../platform/crypto/keyring.ts';
import {
  CLIENT_SECRET_PREFIX,
  clientSecretVerifier,
  generateClientSecret,
  hasClientSecretShape,
  matchClientSecret,
  type StoredVerifier,
} from './client-secrets.ts';

const k1 = randomBytes(32);
const ring1 = RootKeyring.fromKeys(new Map([[1, k1]]), 1);
const ring12 = RootKeyring.fromKeys(
  new Map([
    [1, k1],
    [2, randomBytes(32)],
  ]),
  2,
);
const ring2only = RootKeyring.fromKeys(new Map([[2, randomBytes(32)]]), 2);

const stored = (ring: RootKeyring, id: string, secret: string, clientRowId = 'cli_a'): StoredVerifier => ({
  id,
  verifier: clientSecretVerifier(ring, ring.activeVersion, 'rlm_1', clientRowId, secret),
  keyVersion: ring.activeVersion,
});

describe('client secrets › generation', () => {
  test('case=prefix, URL-safe alphabet and 256 random bits', () => {
    const s = generateClientSecret();
    assert.ok(s.startsWith(CLIENT_SECRET_PREFIX));
    assert.ok(hasClientSecretShape(s));
    assert.match(s, /^[A-Za-z0-9_-]+$/);
    assert.equal(encodeURIComponent(s), s);
    const body = Buffer.from(s.slice(CLIENT_SECRET_PREFIX.length), 'base64url');
    assert.equal(body.length * 8, 256);
  });

  test('case=no repeats and every position varies across many secrets', () => {
    const n = 2000;
    const all = Array.from({ length: n }, generateClientSecret);
    assert.equal(new Set(all).size, n);
    // Each of the 256 bit positions is set in roughly half of the secrets (a biased or constant
    // byte would show up far outside this band).
    const ones = new Array<number>(256).fill(0);
    for (const s of all) {
      const b = Buffer.from(s.slice(CLIENT_SECRET_PREFIX.length), 'base64url');
      for (let i = 0; i < 256; i++) if ((b[i >> 3]! >> (i & 7)) & 1) ones[i]!++;
    }
    for (const count of ones) assert.ok(count > n * 0.4 && count < n * 0.6, `bit count ${count}`);
  });

  test('case=shape check', () => {
    for (const bad of [
      '',
      'pa_cs_',
      `pa_cs_${'A'.repeat(42)}`,
      `pa_cx_${'A'.repeat(43)}`,
      `pa_cs_${'+'.repeat(43)}`,
    ]) {
      assert.equal(hasClientSecretShape(bad), false, bad);
    }
  });
});

describe('client secrets › verifiers', () => {
  const secret = generateClientSecret();

  test('case=deterministic, keyed, bound to the client, never the secret', () => {
    const v = clientSecretVerifier(ring1, 1, 'rlm_1', 'cli_a', secret);
    assert.equal(v, clientSecretVerifier(ring1, 1, 'rlm_1', 'cli_a', secret));
    assert.match(v, /^[A-Za-z0-9_-]{43}$/);
    assert.ok(!v.includes(secret.slice(6, 20)));
    assert.notEqual(v, clientSecretVerifier(ring1, 1, 'rlm_1', 'cli_b', secret));
    assert.notEqual(v, clientSecretVerifier(ring1, 1, 'rlm_2', 'cli_a', secret));
    assert.notEqual(v, clientSecretVerifier(ring2only, 2, 'rlm_1', 'cli_a', secret));
  });

  test('case=right secret matches, a wrong one or another client does not', () => {
    const other = generateClientSecret();
    const candidates = [stored(ring1, 'csk_1', other), stored(ring1, 'csk_2', secret)];
    assert.equal(matchClientSecret(ring1, 'rlm_1', 'cli_a', secret, candidates), 'csk_2');
    assert.equal(matchClientSecret(ring1, 'rlm_1', 'cli_a', other, candidates), 'csk_1');
    assert.equal(matchClientSecret(ring1, 'rlm_1', 'cli_a', generateClientSecret(), candidates), null);
    assert.equal(matchClientSecret(ring1, 'rlm_1', 'cli_a', `${secret}x`, candidates), null);
    assert.equal(matchClientSecret(ring1, 'rlm_1', 'cli_a', secret, []), null);
    // The verifier of client a does not accept the same secret presented for client b.
    assert.equal(matchClientSecret(ring1, 'rlm_1', 'cli_b', secret, candidates), null);
  });

  test('case=a verifier made under an older root key version keeps matching after rotation', () => {
    const old = stored(ring1, 'csk_old', secret);
    const fresh = generateClientSecret();
    const renewed = stored(ring12, 'csk_new', fresh);
    assert.equal(renewed.keyVersion, 2);
    assert.equal(matchClientSecret(ring12, 'rlm_1', 'cli_a', secret, [old, renewed]), 'csk_old');
    assert.equal(matchClientSecret(ring12, 'rlm_1', 'cli_a', fresh, [old, renewed]), 'csk_new');
    // Once version 1 is removed, its verifiers match nothing, and the others still work.
    assert.equal(matchClientSecret(ring2only, 'rlm_1', 'cli_a', secret, [old]), null);
  });

  test('case=malformed stored verifiers never match and never throw', () => {
    for (const verifier of ['', 'AAAA', '!!!', 'A'.repeat(100)]) {
      assert.equal(
        matchClientSecret(ring1, 'rlm_1', 'cli_a', secret, [{ id: 'csk_x', verifier, keyVersion: 1 }]),
        null,
      );
    }
  });
});
