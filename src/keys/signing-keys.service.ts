// Creating signing keys. Generation is CPU work done before the transaction; sealing and the row,
// audit record and event commit together.

import type { Actor } from '../audit/audit.types.ts';
import { recorder } from '../audit/index.ts';
import type { SigningAlgorithm } from '../platform/config/settings.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Tx } from '../platform/db/db.ts';
import { type KeyMaterial, sealContext } from './signing-key-material.ts';
import { insertSigningKey, type SigningKeyState } from './signing-keys.repo.ts';

export async function storeSigningKey(
  tx: Tx,
  keyring: RootKeyring,
  realmId: string,
  material: KeyMaterial,
  state: SigningKeyState,
  actor: Actor,
  now: Date,
  correlationId?: string,
): Promise<void> {
  const sealed = keyring.encrypt('signing-key', material.privatePkcs8, sealContext(realmId, material.kid));
  await insertSigningKey(
    tx,
    {
      realmId,
      kid: material.kid,
      algorithm: material.algorithm,
      state,
      publicJwk: material.publicJwk,
      sealed,
      rootKeyVersion: keyring.activeVersion,
    },
    now,
  );
  const call = { realmId, actor, correlationId: correlationId ?? null, now };
  await recorder(tx, call).audit('signing_key.created', {
    category: 'security',
    target: { type: 'signing_key', id: material.kid },
    data: { kid: material.kid, algorithm: material.algorithm as SigningAlgorithm, state },
  });
}
