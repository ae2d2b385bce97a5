// A compromised key re-applied by restore-reconcile was the realm's active key in the backup; the
// key that replaced it was created after the backup and is lost with it. Without an active key the
// realm issues nothing, and no administrator token could be signed to rotate through the API, so
// reconciliation finishes the emergency rotation itself: any pending key retired, a new key active.
import { OPERATOR_ACTOR } from '../audit/audit.types.ts';
import { generateKeyMaterial } from '../keys/signing-key-material.ts';
import { storeSigningKey } from '../keys/signing-keys.service.ts';
import type { SigningAlgorithm } from '../platform/config/settings.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Tx } from '../platform/db/db.ts';

export interface KeyDeps {
  keyring: RootKeyring;
  algorithm: SigningAlgorithm;
}

/** New active keys for those of `realmIds` (whose keys reconciliation compromised) left without one. */
export async function replaceCompromisedActiveKeys(
  tx: Tx,
  deps: KeyDeps,
  realmIds: ReadonlySet<string>,
  now: Date,
): Promise<number> {
  const realms = await tx.query<{ id: string }>(
    `select r.id from realms r
      where r.id = any ($1) and not exists (select 1 from signing_keys a where a.realm_id = r.id and a.state = 'active')`,
    [[...realmIds]],
  );
  for (const { id: realmId } of realms.rows) {
    // As an emergency rotation does: a pending key is superseded, out of the key set at once.
    await tx.query(
      `update signing_keys set state = 'retired', retired_at = $2 where realm_id = $1 and state = 'pending'`,
      [realmId, now],
    );
    await storeSigningKey(
      tx,
      deps.keyring,
      realmId,
      await generateKeyMaterial(deps.algorithm),
      'active',
      OPERATOR_ACTOR,
      now,
    );
  }
  return realms.rows.length;
}
