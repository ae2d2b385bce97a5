// The remembered-device facts of one sign-in transaction (table signin_device_choices).
import type { Tx } from '../platform/db/db.ts';

// signin/facts.ts reads the choice together with the rest of the account facts.

/** The transaction presented a live remembered device of its account. */
export async function notePresentedDevice(
  q: Tx,
  realmId: string,
  txId: string,
  deviceId: string,
): Promise<void> {
  await q.query(
    `insert into signin_device_choices (realm_id, transaction_id, device_id) values ($1, $2, $3)
     on conflict (realm_id, transaction_id) do update set device_id = excluded.device_id`,
    [realmId, txId, deviceId],
  );
}

export async function recordRememberAnswer(
  q: Tx,
  realmId: string,
  txId: string,
  remember: boolean,
): Promise<void> {
  await q.query(
    `insert into signin_device_choices (realm_id, transaction_id, remember) values ($1, $2, $3)
     on conflict (realm_id, transaction_id) do update set remember = excluded.remember`,
    [realmId, txId, remember],
  );
}
