// Identifier administration (document 1 "Recovery and account administration"): an administrator
// adds an unverified, non-primary identifier, marks one verified without a proof (a verification
// override), or makes a verified one the primary of its type. Each change, with its audit record
// naming the administrator's reason, commits in one transaction on the locked account.
import { inChange, type Recorder } from '../audit/index.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import type { IdentifierType } from './identifiers.ts';
import {
  findIdentifierHolder,
  type IdentifierRow,
  insertIdentifier,
  listIdentifiers,
  lockUser,
  markIdentifierVerifiedById,
  removeRequiredAction,
  setPrimaryIdentifier,
  setUserState,
  touchProfile,
  type UserRow,
} from './users.repo.ts';
import { type AdminCall, userSubject } from './users.service.ts';

async function lockAccount(tx: Tx, call: AdminCall, userId: string): Promise<UserRow> {
  const user = await lockUser(tx, call.realmId, userId);
  if (!user) throw problem.notFound('no such user');
  return user;
}

async function identifierOf(tx: Tx, call: AdminCall, userId: string, id: string): Promise<IdentifierRow> {
  const found = (await listIdentifiers(tx, call.realmId, [userId])).find((i) => i.id === id);
  if (!found) throw problem.notFound('no such identifier');
  return found;
}

const identifierTarget = (id: string) => ({ type: 'identifier', id });

/**
 * POST /users/{user}/identifiers. An identifier names one account of the realm at a time, so a
 * value another account holds is 409 whether or not that account verified it (docs/decisions.md).
 */
export async function addIdentifier(
  db: Db,
  call: AdminCall,
  userId: string,
  input: { type: IdentifierType; value: string; reason: string },
): Promise<IdentifierRow> {
  return inChange(db, call, async (tx, record) => {
    await lockAccount(tx, call, userId);
    const held = await findIdentifierHolder(tx, call.realmId, input.type, input.value);
    if (held && held.user_id === userId) throw problem.conflict('the account already has this identifier');
    if (held) {
      throw problem.conflict(
        held.verified ? 'another account verified this identifier' : 'another account holds this identifier',
      );
    }
    const id = await insertIdentifier(
      tx,
      {
        realmId: call.realmId,
        userId,
        type: input.type,
        value: input.value,
        verified: false,
        primary: false,
      },
      call.now,
    );
    await touchProfile(tx, call.realmId, userId, call.now);
    await record.audit('user.identifier.added', {
      category: 'identity',
      subject: userSubject(userId),
      target: identifierTarget(id),
      reason: input.reason,
      data: { type: input.type },
    });
    return identifierOf(tx, call, userId, id);
  });
}

/**
 * POST /users/{user}/verification-overrides: the identifier counts as verified. An administrator
 * cannot vouch for an address of their own account. A primary email or phone verified this way
 * satisfies verify_email or verify_contact, and an account waiting for its email becomes active,
 * as a returned code would (signin/steps/otp.ts).
 */
export async function overrideVerification(
  db: Db,
  call: AdminCall,
  userId: string,
  input: { identifierId: string; reason: string },
): Promise<IdentifierRow> {
  if (call.actor.type === 'user' && call.actor.id === userId) {
    throw problem.forbidden('administrators cannot override the verification of their own identifiers');
  }
  return inChange(db, call, async (tx, record) => {
    const user = await lockAccount(tx, call, userId);
    const target = await identifierOf(tx, call, userId, input.identifierId);
    if (target.verified) return target;
    await markIdentifierVerifiedById(tx, call.realmId, target.id, call.now);
    await touchProfile(tx, call.realmId, userId, call.now);
    await record.audit('user.identifier.verification_overridden', {
      category: 'security',
      subject: userSubject(userId),
      target: identifierTarget(target.id),
      reason: input.reason,
      data: { type: target.type, primary: target.is_primary },
    });
    if (target.is_primary) await primaryVerified(tx, record, call, user, target.type);
    return { ...target, verified: true };
  });
}

async function primaryVerified(
  tx: Tx,
  record: Recorder,
  call: AdminCall,
  user: UserRow,
  type: IdentifierType,
) {
  if (type === 'username') return;
  const action = type === 'email' ? 'verify_email' : 'verify_contact';
  await removeRequiredAction(tx, call.realmId, user.id, action, call.now);
  if (type === 'email' && user.state === 'pending_verification') {
    await setUserState(tx, call.realmId, user.id, 'active', call.now);
    await record.audit('user.verified', {
      category: 'identity',
      subject: userSubject(user.id),
      reason: 'verification_override',
      data: { state: 'active' },
    });
  }
}

/** POST /users/{user}/identifiers/{id}/primary: only a verified identifier becomes primary (422). */
export async function makePrimary(
  db: Db,
  call: AdminCall,
  userId: string,
  identifierId: string,
  reason: string,
): Promise<IdentifierRow> {
  return inChange(db, call, async (tx, record) => {
    await lockAccount(tx, call, userId);
    const identifiers = await listIdentifiers(tx, call.realmId, [userId]);
    const target = identifiers.find((i) => i.id === identifierId);
    if (!target) throw problem.notFound('no such identifier');
    if (!target.verified) {
      throw problem.validation(
        [{ field: 'id', code: 'unverified', detail: 'only a verified identifier can be primary' }],
        'the identifier is not verified',
      );
    }
    if (target.is_primary) return target;
    const previous = identifiers.find((i) => i.type === target.type && i.is_primary) ?? null;
    await setPrimaryIdentifier(tx, call.realmId, userId, target.type, target.id);
    await touchProfile(tx, call.realmId, userId, call.now);
    await record.audit('user.identifier.primary_set', {
      category: 'identity',
      subject: userSubject(userId),
      target: identifierTarget(target.id),
      reason,
      data: { type: target.type, previous_identifier_id: previous?.id ?? null },
    });
    return { ...target, is_primary: true };
  });
}
