// Signing-key rotations (spec doc 2, "Signing key" states; "Keys and emergency controls"):
//
//   planned:   a new pending key, published at once; keys.lifecycle activates it later.
//   emergency: the active key becomes compromised and leaves the key set, a pending key is
//              retired, a new key signs at once, and a key-kind token_revocations row records it.
//
// Key generation is CPU work done before the transaction; every state change, its audit records
// and the signing_key.rotated event commit together.

import type { Recorder } from '../audit/index.ts';
import { inChange } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { SigningAlgorithm } from '../platform/config/settings.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { isUniqueViolation } from '../platform/db/pg-errors.ts';
import { problem } from '../platform/http/problem.ts';
import { generateSamlKeyMaterial, realmWithSamlKey, replaceSamlKeyInEmergency } from './saml-keys.ts';
import { type KeyTimings, publishUntil } from './signing-key.states.ts';
import { generateKeyMaterial, type KeyMaterial } from './signing-key-material.ts';
import {
  findSigningKey,
  insertKeyRevocation,
  lockKeyInState,
  markCompromised,
  retireNow,
  type SigningKeyRow,
} from './signing-keys.repo.ts';
import { storeSigningKey } from './signing-keys.service.ts';

export type RotationMode = 'planned' | 'emergency';

export interface RotationDeps {
  db: Db;
  keyring: RootKeyring;
  timings: KeyTimings;
}

export interface RotationRequest {
  mode: RotationMode;
  reason: string;
  algorithm: SigningAlgorithm;
}

export interface RotationResult {
  mode: RotationMode;
  key: SigningKeyRow;
  previousKid: string | null;
  previousKeyCompromised: boolean;
  /** The pending key an emergency rotation retired, if there was one. */
  retiredPendingKid: string | null;
}

const pendingConflict = () => problem.conflict('a planned rotation is already pending');

export async function rotateSigningKey(
  deps: RotationDeps,
  call: Call,
  request: RotationRequest,
): Promise<RotationResult> {
  const material = await generateKeyMaterial(request.algorithm);
  // A realm that signs SAML assertions loses that key too (docs/saml-idp.md, "Keys").
  const samlRealm = request.mode === 'emergency' ? await realmWithSamlKey(deps.db, call.realmId) : null;
  const samlMaterial = samlRealm === null ? null : await generateSamlKeyMaterial(samlRealm, call.now);
  try {
    return await inChange(deps.db, call, async (tx, record) => {
      if (request.mode === 'planned') return planInTx(tx, record, deps, call, material, request.reason);
      const result = await emergencyInTx(tx, record, deps, call, material, request.reason);
      if (samlMaterial) await replaceSamlKeyInEmergency(tx, deps.keyring, call, samlMaterial);
      return result;
    });
  } catch (e) {
    // A rotation that raced another one for the same realm loses on the one-pending or
    // one-active index, and nothing of it was written.
    if (isUniqueViolation(e))
      throw request.mode === 'planned'
        ? pendingConflict()
        : problem.conflict('another rotation of this realm committed first');
    throw e;
  }
}

/** A planned rotation: the new key waits in pending; the active one keeps signing. */
async function planInTx(
  tx: Tx,
  record: Recorder,
  deps: RotationDeps,
  call: Call,
  material: KeyMaterial,
  reason: string,
): Promise<RotationResult> {
  if (await lockKeyInState(tx, call.realmId, 'pending')) throw pendingConflict();
  const active = await lockKeyInState(tx, call.realmId, 'active');
  await storeNewKey(tx, deps, call, material, 'pending');
  await record.audit('signing_key.rotation.planned', {
    category: 'security',
    target: { type: 'signing_key', id: material.kid },
    signal: 'signing_key_change',
    reason,
    data: { new_kid: material.kid, previous_kid: active?.kid ?? null, algorithm: material.algorithm },
  });
  return announce(tx, record, call, 'planned', material.kid, active?.kid ?? null, false, null);
}

async function emergencyInTx(
  tx: Tx,
  record: Recorder,
  deps: RotationDeps,
  call: Call,
  material: KeyMaterial,
  reason: string,
): Promise<RotationResult> {
  const active = await lockKeyInState(tx, call.realmId, 'active');
  const pending = await lockKeyInState(tx, call.realmId, 'pending');
  // The old key leaves the active state before the new one takes it: one active key per realm.
  if (active) {
    await markCompromised(tx, call.realmId, active.kid, call.now);
    // Every token it signed is dead; the row outlives any access token it can have signed.
    await insertKeyRevocation(tx, call.realmId, active.kid, publishUntil(call.now, deps.timings), call.now);
  }
  if (pending) await retireNow(tx, call.realmId, pending.kid, call.now);
  await storeNewKey(tx, deps, call, material, 'active');
  await record.audit('signing_key.rotation.emergency', {
    category: 'emergency',
    target: { type: 'signing_key', id: material.kid },
    signal: 'signing_key_change',
    reason,
    data: {
      new_kid: material.kid,
      previous_kid: active?.kid ?? null,
      previous_key_compromised: active !== null,
      retired_pending_kid: pending?.kid ?? null,
      algorithm: material.algorithm,
    },
  });
  if (active) {
    await record.audit('signing_key.compromised', {
      category: 'emergency',
      target: { type: 'signing_key', id: active.kid },
      reason,
      data: { kid: active.kid, replaced_by: material.kid },
    });
  }
  return announce(
    tx,
    record,
    call,
    'emergency',
    material.kid,
    active?.kid ?? null,
    active !== null,
    pending?.kid ?? null,
  );
}

const storeNewKey = (
  tx: Tx,
  deps: RotationDeps,
  call: Call,
  material: KeyMaterial,
  state: 'pending' | 'active',
) =>
  storeSigningKey(
    tx,
    deps.keyring,
    call.realmId,
    material,
    state,
    call.actor,
    call.now,
    call.correlationId ?? undefined,
  );

/** The signing_key.rotated event every rotation emits, and the rotation's result. */
async function announce(
  tx: Tx,
  record: Recorder,
  call: Call,
  mode: RotationMode,
  newKid: string,
  previousKid: string | null,
  previousKeyCompromised: boolean,
  retiredPendingKid: string | null,
): Promise<RotationResult> {
  await record.event('signing_key.rotated', {
    mode,
    new_kid: newKid,
    previous_kid: previousKid,
    previous_key_compromised: previousKeyCompromised,
  });
  return {
    mode,
    key: await requireKey(tx, call.realmId, newKid),
    previousKid,
    previousKeyCompromised,
    retiredPendingKid,
  };
}

async function requireKey(tx: Tx, realmId: string, kid: string): Promise<SigningKeyRow> {
  const row = await findSigningKey(tx, realmId, kid);
  if (!row) throw new Error(`signing key ${kid} vanished inside its own transaction`);
  return row;
}
