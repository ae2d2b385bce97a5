// The first administrator of a realm (identity-cli bootstrap, and `proudauth dev` on first start).
// The account holds the built-in realm-admin role and must enroll TOTP at first sign-in, so it can
// reach the MFA session the administration API requires.

import { OPERATOR_ACTOR } from '../audit/audit.types.ts';
import { recorder } from '../audit/index.ts';
import { systemCall } from '../kernel/call.ts';
import type { KeyMaterial } from '../keys/signing-key-material.ts';
import type { Clock } from '../platform/clock.ts';
import type { SigningAlgorithm } from '../platform/config/settings.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db } from '../platform/db/db.ts';
import { isUniqueViolation } from '../platform/db/pg-errors.ts';
import { findRealmByName, type RealmRow } from '../realms/index.ts';
import { assignRealmRole, findRoleByName } from '../roles/index.ts';
import { BUILTIN_ROLES } from '../roles/permissions.ts';
import { isValidIdentifier } from '../users/identifiers.ts';
import { findUserByIdentifier, insertIdentifier, insertUser, setPassword } from '../users/index.ts';
import type { PasswordHasher } from '../users/password-hasher.ts';
import { createRealmInTx, prepareRealm } from './realm.service.ts';

export const MIN_ADMIN_PASSWORD_LENGTH = 12;
const MAX_PASSWORD_BYTES = 1024;

export class BootstrapError extends Error {}

export interface BootstrapDeps {
  db: Db;
  keyring: RootKeyring;
  hasher: PasswordHasher;
  signingAlgorithm: SigningAlgorithm;
  clock: Clock;
  /** As RealmDeps.newKeyMaterial. */
  newKeyMaterial?: (algorithm: SigningAlgorithm) => Promise<KeyMaterial>;
}

export interface BootstrapResult {
  realm: RealmRow;
  realmCreated: boolean;
  userId: string;
}

export async function bootstrapAdministrator(
  deps: BootstrapDeps,
  input: { realm: string; email: string; password: string },
): Promise<BootstrapResult> {
  if (!isValidIdentifier('email', input.email))
    throw new BootstrapError(`invalid email address: ${input.email}`);
  if ([...input.password].length < MIN_ADMIN_PASSWORD_LENGTH) {
    throw new BootstrapError(`the password must have at least ${MIN_ADMIN_PASSWORD_LENGTH} characters`);
  }
  if (Buffer.byteLength(input.password) > MAX_PASSWORD_BYTES) {
    throw new BootstrapError(`the password must be at most ${MAX_PASSWORD_BYTES} bytes`);
  }

  const existing = await findRealmByName(deps.db, input.realm);
  if (existing && (await findUserByIdentifier(deps.db, existing.id, 'email', input.email))) {
    throw new BootstrapError(`an account with email ${input.email} already exists in realm ${input.realm}`);
  }
  // CPU work before the transaction: a new realm's signing key and the password hash.
  const key = existing ? null : await prepareRealm(deps.signingAlgorithm, input.realm, deps.newKeyMaterial);

  const verifier = await deps.hasher.hash(input.password);
  const now = deps.clock.now();
  try {
    // Realm and administrator commit together, so a refused bootstrap leaves no empty realm behind.
    return await deps.db.tx(async (tx) => {
      const realm =
        existing ??
        (await createRealmInTx(tx, deps.keyring, { name: input.realm }, key, OPERATOR_ACTOR, now));
      const realmId = realm.id;
      const role = await findRoleByName(tx, realmId, BUILTIN_ROLES.realmAdmin.name);
      if (!role)
        throw new BootstrapError(`realm ${input.realm} has no ${BUILTIN_ROLES.realmAdmin.name} role`);
      const user = await insertUser(
        tx,
        {
          realmId,
          displayName: 'Administrator',
          requiredActions: ['configure_totp'],
          createdVia: 'bootstrap',
        },
        now,
      );
      // The operator typed the address: it is trusted as verified.
      await insertIdentifier(
        tx,
        { realmId, userId: user.id, type: 'email', value: input.email, verified: true, primary: true },
        now,
      );
      await setPassword(tx, realmId, user.id, verifier, now);
      await assignRealmRole(
        tx,
        {
          realmId,
          roleId: role.id,
          subjectType: 'user',
          subjectId: user.id,
          source: 'bootstrap',
          reason: 'first administrator',
        },
        now,
      );
      const record = recorder(tx, systemCall(realmId, now, OPERATOR_ACTOR));
      await record.audit('bootstrap.administrator_created', {
        category: 'security',
        subject: { type: 'user', id: user.id },
        signal: 'bootstrap',
        data: { role: BUILTIN_ROLES.realmAdmin.name, required_actions: ['configure_totp'] },
      });
      await record.event('user.created', { user_id: user.id, created_via: 'bootstrap' });
      return { realm, realmCreated: existing === null, userId: user.id };
    });
  } catch (e) {
    if (isUniqueViolation(e, 'realms_name_key')) {
      throw new BootstrapError(
        `realm ${input.realm} was created at the same time by someone else; run bootstrap again`,
      );
    }
    if (isUniqueViolation(e)) {
      throw new BootstrapError(`an account with email ${input.email} already exists in realm ${input.realm}`);
    }
    throw e;
  }
}
