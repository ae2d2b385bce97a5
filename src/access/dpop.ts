// A DPoP-carrying request as the token endpoint and this service's resources judge it: the proof
// (dpop-proof.ts), the server nonce when required (RFC 9449 section 8), and single use of the proof
// across every process through the shared replay cache (spec doc 1, Authentication 8).
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Queryable } from '../platform/db/db.ts';
import { type CheckedProof, checkProof, type ProofExpectations, proofDigest } from './dpop-proof.ts';

export type DpopError = 'invalid_dpop_proof' | 'use_dpop_nonce';

export type DpopOutcome = { ok: true; jkt: string } | { ok: false; error: DpopError; description: string };

export interface DpopSettings {
  db: Queryable;
  keyring: RootKeyring | null;
  /** tokens.dpop_nonce_required */
  nonceRequired: boolean;
}

// A nonce names the minute it was made in and is accepted in that minute and the next, so it
// lives one to two minutes; any process derives the same key from the root key.
const NONCE_WINDOW_MS = 60_000;
const NONCE_SHAPE = /^(\d{1,6})\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{22})$/;

function nonceMac(keyring: RootKeyring, version: number, realmId: string, window: number): string {
  return createHmac('sha256', keyring.macKey('dpop-nonce', version))
    .update(`${realmId}\n${window}`)
    .digest()
    .subarray(0, 16)
    .toString('base64url');
}

/** A fresh server nonce for the realm (the `DPoP-Nonce` header), or null without a root key. */
export function dpopNonce(keyring: RootKeyring | null, realmId: string, now: Date): string | null {
  if (!keyring) return null;
  const window = Math.floor(now.getTime() / NONCE_WINDOW_MS);
  const version = keyring.activeVersion;
  return `${version}.${window.toString(36)}.${nonceMac(keyring, version, realmId, window)}`;
}

function nonceIsFresh(keyring: RootKeyring, realmId: string, nonce: string, now: Date): boolean {
  const m = NONCE_SHAPE.exec(nonce);
  if (!m) return false;
  const version = Number(m[1]);
  const window = Number.parseInt(m[2] as string, 36);
  const current = Math.floor(now.getTime() / NONCE_WINDOW_MS);
  if (window !== current && window !== current - 1) return false;
  if (!keyring.versions().includes(version)) return false;
  const want = Buffer.from(nonceMac(keyring, version, realmId, window));
  const got = Buffer.from(m[3] as string);
  return want.length === got.length && timingSafeEqual(want, got);
}

/**
 * Records the proof as used; false when it was used before (by any process). One insert per
 * proof; a row whose proof has aged out is taken over rather than kept.
 */
export async function recordProofUse(
  db: Queryable,
  realmId: string,
  proof: CheckedProof,
  now: Date,
): Promise<boolean> {
  const r = await db.query(
    `insert into dpop_proof_jtis (realm_id, proof_digest, expires_at) values ($1, $2, $3)
     on conflict (realm_id, proof_digest) do update set expires_at = excluded.expires_at
       where dpop_proof_jtis.expires_at <= $4
     returning 1 as recorded`,
    [realmId, proofDigest(proof), proof.replayUntil, now],
  );
  return r.rows.length === 1;
}

/** Deletes expired proof records, at most `limit` per call (tokens.cleanup). */
export async function deleteExpiredProofs(db: Queryable, now: Date, limit: number): Promise<number> {
  const r = await db.query(
    `delete from dpop_proof_jtis where (realm_id, proof_digest) in (
       select realm_id, proof_digest from dpop_proof_jtis where expires_at <= $1 limit $2)
     returning 1`,
    [now, limit],
  );
  return r.rows.length;
}

/** Judges the DPoP header of a request; the proof is spent only when everything else passed. */
export async function verifyDpop(
  s: DpopSettings,
  realmId: string,
  header: string,
  expected: ProofExpectations,
): Promise<DpopOutcome> {
  const checked = await checkProof(header, expected);
  if (!checked.ok) return { ok: false, error: 'invalid_dpop_proof', description: checked.reason };
  const { proof } = checked;
  if (s.nonceRequired && s.keyring) {
    if (proof.nonce === null || !nonceIsFresh(s.keyring, realmId, proof.nonce, expected.now))
      return { ok: false, error: 'use_dpop_nonce', description: 'a fresh server nonce is required' };
  }
  if (!(await recordProofUse(s.db, realmId, proof, expected.now)))
    return { ok: false, error: 'invalid_dpop_proof', description: 'the proof was used before' };
  return { ok: true, jkt: proof.jkt };
}
