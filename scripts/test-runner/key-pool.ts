// Writes the pool of pregenerated RS256 signing keys the test processes hand out to new realms
// (test/harness/key-pool.ts). They are test fixtures, generated once per checkout and kept.
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { generateKeyMaterial, type KeyMaterial } from '../../src/keys/signing-key-material.ts';

/** More realms than the busiest test file creates; a file that needs more generates the rest. */
export const KEY_POOL_SIZE = 64;

export async function ensureKeyPool(file: string): Promise<{ generated: number }> {
  try {
    const keys = JSON.parse(readFileSync(file, 'utf8')) as KeyMaterial[];
    if (keys.length >= KEY_POOL_SIZE && keys.every((k) => k.algorithm === 'RS256' && k.privatePkcs8))
      return { generated: 0 };
  } catch {}
  // Generation runs on libuv's thread pool, so these proceed in parallel on every core.
  const keys = await Promise.all(Array.from({ length: KEY_POOL_SIZE }, () => generateKeyMaterial('RS256')));
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(keys));
  renameSync(tmp, file);
  return { generated: keys.length };
}
