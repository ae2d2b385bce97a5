// Imported password verifiers against vectors that other implementations produced
// (test/fixtures/password-vectors/README.md says which made each one): python's bcrypt, htpasswd,
// openssl kdf, the argon2 reference CLI, passlib, Firebase's published example and the OpenBSD
// bcrypt vectors. Each verifies with its password, fails with another, and survives storage.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { decodeImported, encodeImported, type ImportedVerifier } from './imported-verifier.ts';
import {
  type Parsed,
  parseBcrypt,
  parseFirebase,
  parseKeycloak,
  parsePhc,
} from './imported-verifier-parse.ts';
import { verifyImported } from './imported-verifier-verify.ts';

type Vector = {
  password: string;
  hash?: string;
  salt?: string;
  credential_data?: string;
  secret_data?: string;
  parameters?: { signer_key: string; salt_separator: string; rounds: number; memory_cost: number };
};
const VECTORS = JSON.parse(
  readFileSync(new URL('../../test/fixtures/password-vectors/vectors.json', import.meta.url), 'utf8'),
) as Record<string, Vector>;

// Tests seal the Firebase signer key as plain base64; the service seals it under the root key.
const seal = (b: Buffer) => b.toString('base64');
const unseal = (s: string) => {
  const o = JSON.parse(Buffer.from(s, 'base64').toString()) as { k: string; s: string };
  return { signerKey: Buffer.from(o.k, 'base64'), saltSeparator: Buffer.from(o.s, 'base64') };
};

function parseVector(name: string, v: Vector): Parsed {
  if (name.startsWith('bcrypt')) return parseBcrypt(v.hash as string);
  if (name.startsWith('phc')) return parsePhc(v.hash as string);
  if (name.startsWith('keycloak')) return parseKeycloak(v.credential_data, v.secret_data);
  const p = v.parameters as NonNullable<Vector['parameters']>;
  return parseFirebase(
    v.hash as string,
    v.salt as string,
    {
      signerKey: Buffer.from(p.signer_key, 'base64'),
      saltSeparator: Buffer.from(p.salt_separator, 'base64'),
      rounds: p.rounds,
      memoryCost: p.memory_cost,
    },
    seal,
  );
}

function parsed(p: Parsed): ImportedVerifier {
  if (!p.ok) throw new Error(`${p.error.member}: ${p.error.detail}`);
  return p.verifier;
}

describe('users › imported password verifiers', () => {
  for (const [name, v] of Object.entries(VECTORS)) {
    test(`case=${name} verifies its password and no other, after storage`, async () => {
      const stored = decodeImported(encodeImported(parsed(parseVector(name, v))));
      assert.equal(await verifyImported(v.password, stored, unseal), true);
      assert.equal(await verifyImported(`${v.password}!`, stored, unseal), false);
      assert.equal(await verifyImported('', stored, unseal), v.password === '');
    });
  }

  test('case=every format and bcrypt prefix named by the issue has a vector', () => {
    for (const name of [
      'bcrypt_2a',
      'bcrypt_2b',
      'bcrypt_2y',
      'keycloak_pbkdf2',
      'keycloak_pbkdf2-sha256',
      'keycloak_pbkdf2-sha512',
      'keycloak_argon2',
      'phc_argon2id',
      'phc_argon2i',
      'phc_scrypt',
      'phc_pbkdf2_sha256',
      'firebase_scrypt',
    ])
      assert.ok(VECTORS[name], name);
  });

  test('case=malformed input names the member at fault', () => {
    const cases: [Parsed, string, string][] = [
      [parseBcrypt('$2x$10$abc'), 'hash', 'invalid'],
      [parseBcrypt(`$2b$31$${'a'.repeat(53)}`), 'hash', 'unsupported_parameters'],
      [parsePhc('$argon2id$v=19$m=65536,t=3,p=4$c2FsdA'), 'hash', 'invalid'],
      [parsePhc('$md5$abc$def$ghi'), 'hash', 'unsupported_algorithm'],
      [
        parsePhc('$scrypt$ln=25,r=8,p=1$c2FsdHNhbHQ$c2FsdHNhbHRzYWx0c2FsdA'),
        'hash',
        'unsupported_parameters',
      ],
      [
        parseKeycloak('{"algorithm":"md5","hashIterations":1}', '{"value":"AAAA","salt":"AAAA"}'),
        'credential_data.algorithm',
        'unsupported_algorithm',
      ],
      [
        parseKeycloak('{"algorithm":"pbkdf2","hashIterations":"x"}', '{"value":"AAAA","salt":"AAAA"}'),
        'credential_data.hashIterations',
        'invalid',
      ],
      [
        parseKeycloak('{"algorithm":"pbkdf2","hashIterations":10}', '{"value":"@@","salt":"AAAA"}'),
        'secret_data.value',
        'invalid',
      ],
      [parseKeycloak('not json', '{}'), 'credential_data', 'invalid'],
    ];
    for (const [p, member, code] of cases) {
      assert.equal(p.ok, false);
      if (!p.ok) assert.deepEqual([p.error.member, p.error.code], [member, code], p.error.detail);
    }
  });

  test('case=a stored form that was tampered with is refused', () => {
    const v = parsed(parsePhc(VECTORS.phc_scrypt?.hash as string));
    const text = encodeImported(v).replace('"ln":14', '"ln":40');
    assert.throws(() => decodeImported(text), /scrypt parameters/);
  });
});
