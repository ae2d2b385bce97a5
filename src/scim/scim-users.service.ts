// Provisioning users through SCIM (docs/scim.md). Every change runs in one transaction with the
// users context's own steps (createUserInTx, the *InTx account changes), so the account, its SCIM
// record, the audit records and the outbox events commit together. DELETE erases the account as an
// administrator's delete does; `active: false` suspends it (docs/decisions.md, SCIM).
import { inChange, type Recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import { joinFromDirectory, leaveFromDirectory } from '../organizations/index.ts';
import type { Db, Queryable, Tx } from '../platform/db/db.ts';
import {
  changeAccountStateInTx,
  createUserInTx,
  deleteAccountInTx,
  isValidIdentifier,
  type NewUser,
  type PasswordHasher,
  updateAccountProfileInTx,
} from '../users/index.ts';
import { ScimError } from './scim-error.ts';
import { applyPatch, type PatchOperation } from './scim-patch.ts';
import {
  decodeUserResource,
  etagOf,
  primaryEmailOf,
  type ScimUserInput,
  userResource,
} from './scim-user-resource.ts';
import {
  deleteScimRecord,
  findScimUser,
  findUserIdByUserName,
  insertScimUser,
  lockScimUser,
  type ScimUserRow,
  touchScimUser,
  updateScimUser,
} from './scim-users.repo.ts';

/**
 * A SCIM request's call: the connector is the actor; the request id is the correlation id. An
 * organization connector names its organization: it provisions members of it and sees only the
 * accounts it provisioned (docs/scim.md, "Organization connectors").
 */
export interface ScimCall extends Call {
  correlationId: string;
  connectorId: string;
  organizationId: string | null;
}

/** Whose accounts a call sees: every provisioned one (realm connector) or its own. */
export const userScopeOf = (call: ScimCall): string | null =>
  call.organizationId === null ? null : call.connectorId;

const notFound = () => new ScimError(404, null, 'no such user');
const taken = () => new ScimError(409, 'uniqueness', 'userName is already in use');

/** RFC 7644 §3.14: a write with If-Match must name the current version (or `*`). */
export function checkIfMatch(version: number, ifMatch: string | undefined): void {
  if (ifMatch === undefined) return;
  const wanted = ifMatch.split(',').map((t) => t.trim());
  const current = etagOf(version);
  if (wanted.includes('*') || wanted.includes(current) || wanted.includes(current.slice(2))) return;
  throw new ScimError(412, null, 'the resource changed since that version');
}

/** The sign-in identifiers a new account gets: userName as username when it is shaped like one,
 * the primary email (or an email-shaped userName) as its email. */
function identifiersOf(input: ScimUserInput): Pick<NewUser, 'email' | 'username'> {
  const email =
    primaryEmailOf(input.attributes) ?? (isValidIdentifier('email', input.userName) ? input.userName : null);
  if (email !== null && !isValidIdentifier('email', email))
    throw new ScimError(400, 'invalidValue', 'the primary email is not a valid address');
  return {
    ...(isValidIdentifier('username', input.userName) ? { username: input.userName } : {}),
    ...(email === null ? {} : { email }),
  };
}

export async function createScimUser(
  deps: { db: Db; hasher: PasswordHasher },
  call: ScimCall,
  input: ScimUserInput,
): Promise<ScimUserRow> {
  const verifier = input.password === null ? null : await deps.hasher.hash(input.password);
  return inChange(deps.db, call, async (tx, record) => {
    if (await findUserIdByUserName(tx, call.realmId, input.userName)) throw taken();
    const user = await createUserInTx(
      tx,
      call,
      {
        ...identifiersOf(input),
        ...(input.displayName === null ? {} : { displayName: input.displayName }),
        emailVerified: false,
        createdVia: 'scim',
      },
      verifier,
    );
    await insertScimUser(
      tx,
      call.realmId,
      {
        userId: user.id,
        connectorId: call.connectorId,
        userName: input.userName,
        externalId: input.externalId,
        attributes: input.attributes,
      },
      call.now,
    );
    // An organization's directory provisions members of that organization.
    if (call.organizationId !== null)
      await joinFromDirectory(tx, call, call.organizationId, user.id, [], SCIM_SOURCE);
    if (!input.active)
      await changeAccountStateInTx(tx, record, call, user.id, 'suspend', 'provisioned inactive by SCIM');
    return (await lockScimUser(tx, call.realmId, user.id, null)) as ScimUserRow;
  });
}

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

async function replaceInTx(
  tx: Tx,
  record: Recorder,
  call: ScimCall,
  row: ScimUserRow,
  input: ScimUserInput,
): Promise<ScimUserRow> {
  let changed = false;
  if (input.userName.toLowerCase() !== row.user_name.toLowerCase()) {
    const holder = await findUserIdByUserName(tx, call.realmId, input.userName);
    if (holder && holder !== row.user_id) throw taken();
  }
  if (input.displayName !== row.display_name) {
    await updateAccountProfileInTx(tx, record, call, row.user_id, { displayName: input.displayName });
    changed = true;
  }
  const active = row.state === 'active';
  if (active && !input.active) {
    await changeAccountStateInTx(tx, record, call, row.user_id, 'suspend', 'deactivated by SCIM');
    changed = true;
  } else if (!active && input.active) {
    await changeAccountStateInTx(tx, record, call, row.user_id, 'reactivate', 'activated by SCIM');
    changed = true;
  }
  const fields = [
    ...(input.userName !== row.user_name ? ['userName'] : []),
    ...(input.externalId !== row.external_id ? ['externalId'] : []),
    ...(sameJson(input.attributes, row.attributes) ? [] : ['attributes']),
  ];
  if (fields.length > 0) {
    await updateScimUser(
      tx,
      call.realmId,
      {
        userId: row.user_id,
        userName: input.userName,
        externalId: input.externalId,
        attributes: input.attributes,
      },
      call.now,
    );
    await record.audit('user.updated', {
      category: 'identity',
      subject: { type: 'user', id: row.user_id },
      data: { fields: fields.map((f) => `scim.${f}`) },
    });
  } else if (changed) {
    await touchScimUser(tx, call.realmId, row.user_id, call.now);
  }
  return (await lockScimUser(tx, call.realmId, row.user_id, null)) as ScimUserRow;
}

async function lockedForWrite(tx: Tx, call: ScimCall, userId: string, ifMatch: string | undefined) {
  const row = await lockScimUser(tx, call.realmId, userId, userScopeOf(call));
  if (!row) throw notFound();
  checkIfMatch(row.version, ifMatch);
  return row;
}

export const replaceScimUser = (
  db: Db,
  call: ScimCall,
  userId: string,
  input: ScimUserInput,
  ifMatch?: string,
) =>
  inChange(db, call, async (tx, record) =>
    replaceInTx(tx, record, call, await lockedForWrite(tx, call, userId, ifMatch), input),
  );

export const patchScimUser = (
  db: Db,
  call: ScimCall,
  userId: string,
  ops: readonly PatchOperation[],
  base: string,
  ifMatch?: string,
) =>
  inChange(db, call, async (tx, record) => {
    const row = await lockedForWrite(tx, call, userId, ifMatch);
    const next = decodeUserResource(applyPatch(userResource(row, base), ops));
    return replaceInTx(tx, record, call, row, next);
  });

/**
 * A realm connector's DELETE erases the account. An organization connector's ends the account's
 * membership of its organization, and erases the account only when no other organization holds it;
 * otherwise the account stays, no longer provisioned by this directory (docs/decisions.md, SCIM).
 */
export const deleteScimUser = (db: Db, call: ScimCall, userId: string, ifMatch?: string) =>
  inChange(db, call, async (tx, record) => {
    await lockedForWrite(tx, call, userId, ifMatch);
    if (call.organizationId !== null) {
      const elsewhere = await leaveFromDirectory(
        tx,
        call,
        call.organizationId,
        userId,
        'deprovisioned by SCIM',
      );
      if (elsewhere > 0) {
        await deleteScimRecord(tx, call.realmId, userId);
        return;
      }
    }
    await deleteAccountInTx(tx, record, call, userId);
  });

export async function getScimUser(q: Queryable, call: ScimCall, userId: string): Promise<ScimUserRow> {
  const row = await findScimUser(q, call.realmId, userId, userScopeOf(call));
  if (!row) throw notFound();
  return row;
}

export const SCIM_SOURCE = 'scim';
