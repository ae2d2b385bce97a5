// GET /user-imports/reconciliation (spec doc 2, Migration adapters rule 4; docs/migration.md,
// Reconciliation): the expected counts of a converted export against what the realm holds of the
// source's accounts, and a sample proof about the imported verifiers and TOTP factors.
//
// What the proof can honestly say without the plaintexts: every sampled verifier reads back into a
// scheme this release verifies, with parameters inside the supported bounds (and a Firebase
// verifier's sealed signer key opens under the current root key); every sampled TOTP seed decrypts
// under the current root key, is 10 to 128 bytes, and has digits, period and algorithm the
// sign-in step accepts; and this process computes every scheme and TOTP algorithm found, shown by
// known-answer tests. It cannot show that a verifier was made from the password its user knows:
// only that user's first sign-in can.
import { type OtpAlgorithm, sampleTotps, totpAt, totpSeedContext, totpStep } from '../mfa/index.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Queryable } from '../platform/db/db.ts';
import {
  decodeImported,
  describeImported,
  type ImportedVerifier,
  isImported,
  type PasswordHasher,
} from '../users/index.ts';
import { totpSelfTests, verifierSelfTests } from './known-answers.ts';
import {
  type ImportedCounts,
  importedCounts,
  sampleImportedTotpHolders,
  sampleImportedVerifiers,
} from './user-imports.repo.ts';

export const EXPECTED = ['users', 'memberships', 'password_verifiers', 'totp_factors'] as const;
export type ExpectedName = (typeof EXPECTED)[number];

export interface ReconciliationQuery {
  sourceSystem: string;
  expected: Partial<Record<ExpectedName, number>>;
  /** Accounts sampled for each proof (0..100). */
  sample: number;
}

export interface ReconciliationDeps {
  db: Queryable;
  keyring: RootKeyring;
  hasher: PasswordHasher;
}

/** What is compared against the expected count: accounts deleted locally count as carried over. */
function importedValue(name: ExpectedName, c: ImportedCounts): number {
  return name === 'users' ? c.users + c.deleted_locally : c[name];
}

type Failure = { user_id: string; reason: string };

async function verifierProof(deps: ReconciliationDeps, realmId: string, q: ReconciliationQuery) {
  const sampled = await sampleImportedVerifiers(deps.db, realmId, q.sourceSystem, q.sample);
  const schemes: Record<string, number> = {};
  const failures: Failure[] = [];
  const kinds: ImportedVerifier['kind'][] = [];
  let rehashed = 0;
  for (const s of sampled) {
    if (!isImported(s.hash)) {
      // Replaced at a sign-in already: the realm's own Argon2id.
      rehashed++;
      continue;
    }
    try {
      const v = decodeImported(s.hash);
      if (v.kind === 'firebase-scrypt') {
        const key = deps.hasher.openFirebaseKey(v.sealedKey);
        if (key.signerKey.length !== v.hash.length)
          throw new Error('the signer key does not match the hash length');
      }
      kinds.push(v.kind);
      const label = describeImported(v).split(' ')[0] as string;
      schemes[label] = (schemes[label] ?? 0) + 1;
    } catch (e) {
      failures.push({ user_id: s.user_id, reason: e instanceof Error ? e.message : 'unreadable' });
    }
  }
  return {
    sampled: sampled.length,
    in_source_format: sampled.length - rehashed - failures.length,
    rehashed_at_sign_in: rehashed,
    schemes,
    self_tests: await verifierSelfTests(kinds),
    failures,
  };
}

const SEED_BYTES = { min: 10, max: 128 };

async function totpProof(deps: ReconciliationDeps, realmId: string, q: ReconciliationQuery, now: Date) {
  const holders = await sampleImportedTotpHolders(deps.db, realmId, q.sourceSystem, q.sample);
  const stored = await sampleTotps(deps.db, realmId, holders);
  const failures: Failure[] = [];
  const algorithms: OtpAlgorithm[] = [];
  for (const t of stored) {
    try {
      const seed = deps.keyring.decrypt('totp-seed', t.secret_sealed, totpSeedContext(realmId, t.user_id));
      if (seed.length < SEED_BYTES.min || seed.length > SEED_BYTES.max)
        throw new Error('seed length out of range');
      if (![6, 7, 8].includes(t.digits)) throw new Error('digits out of range');
      // A code for now computes: the parameters are ones the sign-in step runs with.
      totpAt(seed, totpStep(now.getTime(), t.period_seconds), t.digits, t.algorithm);
      algorithms.push(t.algorithm);
    } catch (e) {
      failures.push({ user_id: t.user_id, reason: e instanceof Error ? e.message : 'unreadable' });
    }
  }
  return {
    sampled: stored.length,
    verified_parameters: stored.length - failures.length,
    self_tests: totpSelfTests(algorithms),
    failures,
  };
}

export async function reconcile(
  deps: ReconciliationDeps,
  realmId: string,
  q: ReconciliationQuery,
  now: Date,
) {
  const counts = await importedCounts(deps.db, realmId, q.sourceSystem);
  const mismatches = EXPECTED.flatMap((name) => {
    const expected = q.expected[name];
    const imported = importedValue(name, counts);
    return expected === undefined || expected === imported ? [] : [{ name, expected, imported }];
  });
  const named = EXPECTED.filter((n) => q.expected[n] !== undefined);
  const passwords = await verifierProof(deps, realmId, q);
  const totp = await totpProof(deps, realmId, q, now);
  const proofHolds =
    passwords.failures.length === 0 &&
    totp.failures.length === 0 &&
    Object.values(passwords.self_tests).every(Boolean) &&
    Object.values(totp.self_tests).every(Boolean);
  return {
    source_system: q.sourceSystem,
    expected: Object.fromEntries(named.map((n) => [n, q.expected[n]])),
    imported: counts,
    matches: named.length === 0 ? null : mismatches.length === 0,
    mismatches,
    proof: { holds: proofHolds, password_verifiers: passwords, totp_factors: totp },
  };
}
