// Worker task keys.lifecycle (spec doc 2, Signing key states; every minute): activates pending
// keys after the prepublish period, retires keys past publish_until, and starts a planned rotation
// when the active key reached the rotation interval.

import { SYSTEM_ACTOR } from '../audit/audit.types.ts';
import { recordAudit } from '../audit/index.ts';
import { addEvent } from '../events/index.ts';
import type { TaskReport } from '../kernel/task.ts';
import type { SigningAlgorithm } from '../platform/config/settings.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db } from '../platform/db/db.ts';
import { isUniqueViolation } from '../platform/db/pg-errors.ts';
import { activeNeedsSuccessor, type KeyTimings, pendingIsDue, publishUntil } from './signing-key.states.ts';
import { generateKeyMaterial } from './signing-key-material.ts';
import { storeSigningKey } from './signing-keys.service.ts';

export interface KeyLifecycleDeps {
  db: Db;
  keyring: RootKeyring;
  timings: KeyTimings;
  signingAlgorithm: SigningAlgorithm;
}

interface KeyRow {
  realm_id: string;
  kid: string;
  state: string;
  created_at: Date;
  activated_at: Date | null;
}

export async function runKeyLifecycle(deps: KeyLifecycleDeps, now: Date): Promise<TaskReport> {
  const report = { retired: 0, activated: 0, rotations_started: 0 };
  const { db, timings } = deps;

  const retired = await db.tx(async (tx) => {
    const r = await tx.query<{ realm_id: string; kid: string }>(
      `update signing_keys set state = 'retired', retired_at = $1
        where state = 'retiring' and publish_until <= $1 returning realm_id, kid`,
      [now],
    );
    for (const k of r.rows) {
      await recordAudit(
        tx,
        {
          realmId: k.realm_id,
          type: 'signing_key.retired',
          category: 'security',
          actor: SYSTEM_ACTOR,
          target: { type: 'signing_key', id: k.kid },
        },
        now,
      );
    }
    return r.rowCount;
  });
  report.retired = retired;

  const keys = (
    await db.query<KeyRow>(
      `select realm_id, kid, state, created_at, activated_at from signing_keys where state in ('pending', 'active')`,
    )
  ).rows;
  const byRealm = new Map<string, KeyRow[]>();
  for (const k of keys) byRealm.set(k.realm_id, [...(byRealm.get(k.realm_id) ?? []), k]);

  for (const [realmId, realmKeys] of byRealm) {
    const pending = realmKeys.find((k) => k.state === 'pending');
    const active = realmKeys.find((k) => k.state === 'active');
    if (pending && pendingIsDue(new Date(pending.created_at), now, timings)) {
      if (await activate(db, realmId, pending.kid, active?.kid ?? null, now, timings)) report.activated++;
    } else if (
      !pending &&
      active?.activated_at &&
      activeNeedsSuccessor(new Date(active.activated_at), now, timings)
    ) {
      if (await startPlannedRotation(deps, realmId, active.kid, now)) report.rotations_started++;
    }
  }
  return report;
}

async function activate(
  db: Db,
  realmId: string,
  kid: string,
  previousKid: string | null,
  now: Date,
  timings: KeyTimings,
): Promise<boolean> {
  return db.tx(async (tx) => {
    // Retire the old active key first: the unique index allows one active key per realm.
    if (previousKid) {
      await tx.query(
        `update signing_keys set state = 'retiring', retiring_at = $3, publish_until = $4
          where realm_id = $1 and kid = $2 and state = 'active'`,
        [realmId, previousKid, now, publishUntil(now, timings)],
      );
    }
    const r = await tx.query(
      `update signing_keys set state = 'active', activated_at = $3 where realm_id = $1 and kid = $2 and state = 'pending'`,
      [realmId, kid, now],
    );
    if (r.rowCount !== 1) return false;
    await recordAudit(
      tx,
      {
        realmId,
        type: 'signing_key.activated',
        category: 'security',
        actor: SYSTEM_ACTOR,
        target: { type: 'signing_key', id: kid },
        data: { kid, previous_kid: previousKid },
      },
      now,
    );
    return true;
  });
}

async function startPlannedRotation(
  deps: KeyLifecycleDeps,
  realmId: string,
  activeKid: string,
  now: Date,
): Promise<boolean> {
  const material = await generateKeyMaterial(deps.signingAlgorithm);
  // A concurrent rotation loses on the one-pending-key index and changes nothing.
  return deps.db
    .tx(async (tx) => {
      await storeSigningKey(tx, deps.keyring, realmId, material, 'pending', SYSTEM_ACTOR, now);
      await recordAudit(
        tx,
        {
          realmId,
          type: 'signing_key.rotation.planned',
          category: 'security',
          actor: SYSTEM_ACTOR,
          target: { type: 'signing_key', id: material.kid },
          signal: 'signing_key_change',
          data: { new_kid: material.kid, previous_kid: activeKid, reason: 'rotation interval reached' },
        },
        now,
      );
      await addEvent(tx, {
        realmId,
        type: 'signing_key.rotated',
        occurredAt: now,
        data: {
          mode: 'planned',
          new_kid: material.kid,
          previous_kid: activeKid,
          previous_key_compromised: false,
        },
      });
    })
    .then(
      () => true,
      (e: unknown) => {
        if (isUniqueViolation(e)) return false;
        throw e;
      },
    );
}
