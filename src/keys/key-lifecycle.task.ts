// Worker task keys.lifecycle (spec doc 2, Signing key states; every minute): activates pending
// keys after the prepublish period, retires keys past publish_until, and starts a planned rotation
// when the active key reached the rotation interval.

import { inChange, recorder } from '../audit/index.ts';
import { systemCall } from '../kernel/call.ts';
import type { TaskReport } from '../kernel/task.ts';
import type { SigningAlgorithm } from '../platform/config/settings.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db } from '../platform/db/db.ts';
import { Problem } from '../platform/http/problem.ts';
import { runSamlKeyLifecycle } from './saml-keys.ts';
import { activeNeedsSuccessor, type KeyTimings, pendingIsDue, publishUntil } from './signing-key.states.ts';
import { rotateSigningKey } from './signing-key-rotation.service.ts';

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
      await recorder(tx, systemCall(k.realm_id, now)).audit('signing_key.retired', {
        category: 'security',
        target: { type: 'signing_key', id: k.kid },
      });
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
      if (await startPlannedRotation(deps, realmId, now)) report.rotations_started++;
    }
  }
  return { ...report, ...(await runSamlKeyLifecycle(deps, now)) };
}

async function activate(
  db: Db,
  realmId: string,
  kid: string,
  previousKid: string | null,
  now: Date,
  timings: KeyTimings,
): Promise<boolean> {
  return inChange(db, systemCall(realmId, now), async (tx, record) => {
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
    await record.audit('signing_key.activated', {
      category: 'security',
      target: { type: 'signing_key', id: kid },
      data: { kid, previous_kid: previousKid },
    });
    return true;
  });
}

async function startPlannedRotation(deps: KeyLifecycleDeps, realmId: string, now: Date): Promise<boolean> {
  try {
    await rotateSigningKey(deps, systemCall(realmId, now), {
      mode: 'planned',
      reason: 'rotation interval reached',
      algorithm: deps.signingAlgorithm,
    });
    return true;
  } catch (e) {
    // A concurrent run (or an administrator) started one first; nothing of this one was written.
    if (e instanceof Problem && e.status === 409) return false;
    throw e;
  }
}
