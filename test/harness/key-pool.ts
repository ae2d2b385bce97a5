// RS256 signing keys generated ahead of the tests. A 2048-bit RSA key takes a few hundred
// milliseconds of CPU to generate and nearly every test creates a realm with one, so the test runner
// writes a pool of them to a file once (scripts/test-runner/key-pool.ts) and each test process
// hands them out, one realm each: within a file no two realms share a key. Past the pool, and for
// other algorithms, keys are generated as the service does.
import { readFileSync } from 'node:fs';
import { generateKeyMaterial, type KeyMaterial } from '../../src/keys/signing-key-material.ts';
import type { SigningAlgorithm } from '../../src/platform/config/settings.ts';

let pool: KeyMaterial[] | null = null;

function loadPool(): KeyMaterial[] {
  const file = process.env.PROUDAUTH_TEST_KEY_POOL;
  if (!file) return [];
  return (JSON.parse(readFileSync(file, 'utf8')) as KeyMaterial[]).filter((k) => k.algorithm === 'RS256');
}

/** A new realm's key pair: the next unused pregenerated one when there is one for `algorithm`. */
export async function testKeyMaterial(algorithm: SigningAlgorithm): Promise<KeyMaterial> {
  if (algorithm === 'RS256') {
    pool ??= loadPool();
    const key = pool.shift();
    if (key) return key;
  }
  return generateKeyMaterial(algorithm);
}
