// Creating a realm: its policy revision 1, an active signing key, the built-in roles and the CLI
// client, audited, in one transaction.

import type { Actor } from '../audit/audit.types.ts';
import { recorder } from '../audit/index.ts';
import { insertBuiltinClients } from '../clients/builtin-clients.ts';
import { systemCall } from '../kernel/call.ts';
import { generateKeyMaterial, type KeyMaterial } from '../keys/signing-key-material.ts';
import { storeSigningKey } from '../keys/signing-keys.service.ts';
import type { SigningAlgorithm } from '../platform/config/settings.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { insertRealm, type RealmRow } from '../realms/index.ts';
import { defaultRealmPolicy } from '../realms/policy-defaults.ts';
import { insertBuiltinRoles } from '../roles/index.ts';

// Realm names appear in URLs and issuers, so they are kept to a conservative URL-safe alphabet.
const REALM_NAME = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

export class InvalidRealmNameError extends Error {}

export function checkRealmName(name: string): void {
  if (!REALM_NAME.test(name)) {
    throw new InvalidRealmNameError(
      `invalid realm name "${name}": use 1 to 63 lower-case letters, digits and inner hyphens`,
    );
  }
}

export interface RealmDeps {
  db: Db;
  keyring: RootKeyring;
  signingAlgorithm: SigningAlgorithm;
  /** Where the new realm's key pair comes from (default: generated now; the tests use pregenerated ones). */
  newKeyMaterial?: (algorithm: SigningAlgorithm) => Promise<KeyMaterial>;
}

export interface NewRealm {
  name: string;
  displayName?: string;
}

/** Checks the name and generates the signing key: the work a realm needs before its transaction. */
export async function prepareRealm(
  algorithm: SigningAlgorithm,
  name: string,
  newKeyMaterial: (algorithm: SigningAlgorithm) => Promise<KeyMaterial> = generateKeyMaterial,
): Promise<KeyMaterial> {
  checkRealmName(name);
  return newKeyMaterial(algorithm);
}

export async function createRealm(
  deps: RealmDeps,
  input: NewRealm,
  actor: Actor,
  now: Date,
): Promise<RealmRow> {
  const key = await prepareRealm(deps.signingAlgorithm, input.name, deps.newKeyMaterial);
  return deps.db.tx((tx) => createRealmInTx(tx, deps.keyring, input, key, actor, now));
}

/** For use cases that create a realm together with other rows in one transaction. */
export async function createRealmInTx(
  tx: Tx,
  keyring: RootKeyring,
  input: NewRealm,
  key: KeyMaterial | null,
  actor: Actor,
  now: Date,
): Promise<RealmRow> {
  if (!key) throw new Error('a new realm needs its prepared signing key');
  const realm = await insertRealm(
    tx,
    {
      id: newId('rlm', now.getTime()),
      name: input.name,
      displayName: input.displayName ?? input.name,
      policy: defaultRealmPolicy(),
      actorId: actor.id,
    },
    now,
  );
  await insertBuiltinRoles(tx, realm.id, now);
  const cliClient = await insertBuiltinClients(tx, realm.id, now);
  await storeSigningKey(tx, keyring, realm.id, key, 'active', actor, now);
  await recorder(tx, systemCall(realm.id, now, actor)).audit('realm.created', {
    category: 'configuration',
    target: { type: 'realm', id: realm.id },
    data: { realm_id: realm.id, policy_revision: 1, builtin_client_id: cliClient },
  });
  return realm;
}
