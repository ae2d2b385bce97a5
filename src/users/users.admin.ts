// Changes to existing accounts through the administration API (spec doc 1, "Account states" and
// "Recovery and account administration"; doc 2, Revocation exposure): credentials, state,
// sessions and deletion. Each one validates, then changes the account, its audit record and its
// outbox events in one transaction. Creating and reading accounts is in users.service.ts.

import type { AuditType } from '../audit/audit.types.ts';
import { inChange, type Recorder } from '../audit/index.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { currentPolicy, policyValue } from '../realms/index.ts';
import { type AccountRevocation, endAccountSessions } from '../sessions/index.ts';
import { ADMIN_STATE_CHANGES, type StateChange } from './account.states.ts';
import { eraseAccount } from './account-erasure.ts';
import type { UsersDeps } from './users.deps.ts';
import {
  addRequiredAction,
  lockUser,
  markPasswordCompromised,
  removeRequiredAction,
  setPassword,
  setUserState,
  type UserRow,
  updateProfile,
} from './users.repo.ts';
import type { ProfileChange } from './users.schema.ts';
import { type AdminCall, type UserView, userSubject, viewOf } from './users.service.ts';

type Deps = UsersDeps;

async function requireUser(tx: Tx, realmId: string, userId: string): Promise<UserRow> {
  const user = await lockUser(tx, realmId, userId);
  if (!user) throw problem.notFound('no such user');
  return user;
}

/** decision D13: an administrator never changes the state of their own account. */
function refuseSelf(call: AdminCall, userId: string): void {
  if (call.actor.type === 'user' && call.actor.id === userId) {
    throw problem.forbidden('administrators cannot change the state of their own account');
  }
}

const revocationCounts = (r: AccountRevocation) => ({
  sessions_revoked: r.sessions.length,
  grants_revoked: r.grants,
  support_grants_revoked: r.supportGrants,
});

// ---- credentials -----------------------------------------------------------------------------

export async function setAccountPassword(
  deps: Deps,
  call: AdminCall,
  userId: string,
  input: { password: string; temporary?: boolean },
): Promise<void> {
  const verifier = await deps.hasher.hash(input.password);
  const temporary = input.temporary ?? false;
  await inChange(deps.db, call, async (tx, record) => {
    await requireUser(tx, call.realmId, userId);
    await setPassword(tx, call.realmId, userId, verifier, call.now);
    // A temporary password must be replaced at the next sign-in; a final one lifts that demand.
    if (temporary) await addRequiredAction(tx, call.realmId, userId, 'update_password', call.now);
    else await removeRequiredAction(tx, call.realmId, userId, 'update_password', call.now);
    const policy = await currentPolicy(tx, call.realmId);
    const revoke = policyValue(policy, 'password', 'revoke_sessions_on_change') !== false;
    const revoked = revoke
      ? await endAccountSessions(tx, call.realmId, userId, 'password_changed', call.now, call.correlationId)
      : null;
    await record.audit('user.password_set', {
      category: 'security',
      subject: userSubject(userId),
      data: { temporary, ...(revoked ? revocationCounts(revoked) : { sessions_revoked: 0 }) },
    });
  });
}

export async function markAccountPasswordCompromised(
  db: Db,
  call: AdminCall,
  userId: string,
  reason: string | null,
): Promise<void> {
  await inChange(db, call, async (tx, record) => {
    await requireUser(tx, call.realmId, userId);
    if (!(await markPasswordCompromised(tx, call.realmId, userId)))
      throw problem.notFound('the account has no password');
    await addRequiredAction(tx, call.realmId, userId, 'update_password', call.now);
    const revoked = await endAccountSessions(
      tx,
      call.realmId,
      userId,
      'credential_compromised',
      call.now,
      call.correlationId,
    );
    await record.audit('user.password_compromised', {
      category: 'security',
      subject: userSubject(userId),
      signal: 'credential_compromised',
      reason,
      data: revocationCounts(revoked),
    });
    await record.event('security.credential_compromised', { user_id: userId });
  });
}

// ---- profile -----------------------------------------------------------------------------------

/**
 * Changes the account's profile. Only a real change counts: it moves the profile time that
 * UserInfo reports as updated_at (OIDC Core 5.1) and is audited; the same value again changes
 * nothing.
 */
export async function updateAccountProfile(
  db: Db,
  call: AdminCall,
  userId: string,
  change: ProfileChange,
): Promise<UserView> {
  return inChange(db, call, async (tx, record) => {
    const user = await updateAccountProfileInTx(tx, record, call, userId, change);
    const [view] = await viewOf(tx, call.realmId, [user]);
    return view as UserView;
  });
}

/** The transactional part of updateAccountProfile, for use cases that change more in one commit. */
export async function updateAccountProfileInTx(
  tx: Tx,
  record: Recorder,
  call: AdminCall,
  userId: string,
  change: ProfileChange,
): Promise<UserRow> {
  const user = await requireUser(tx, call.realmId, userId);
  if (user.display_name === change.displayName) return user;
  await record.audit('user.updated', {
    category: 'identity',
    subject: userSubject(userId),
    data: { fields: ['display_name'] },
  });
  return updateProfile(tx, call.realmId, userId, change, call.now);
}

// ---- account state -----------------------------------------------------------------------------

// The administrator's moves are in account.states.ts. Suspend and lock end every session, grant
// and token; reactivate restores none of them. Deleted accounts are not found.
export type { StateChange };

const TRANSITIONS: Record<StateChange, { from: readonly string[]; to: string; audit: AuditType }> = {
  suspend: { ...ADMIN_STATE_CHANGES.suspend, audit: 'user.suspended' },
  lock: { ...ADMIN_STATE_CHANGES.lock, audit: 'user.locked' },
  reactivate: { ...ADMIN_STATE_CHANGES.reactivate, audit: 'user.reactivated' },
};

export async function changeAccountState(
  db: Db,
  call: AdminCall,
  userId: string,
  change: StateChange,
  reason: string,
): Promise<UserView> {
  refuseSelf(call, userId);
  return inChange(db, call, async (tx, record) => {
    const user = await changeAccountStateInTx(tx, record, call, userId, change, reason);
    const [view] = await viewOf(tx, call.realmId, [user]);
    return view as UserView;
  });
}

/** The transactional part of changeAccountState, for use cases that change more in one commit. */
export async function changeAccountStateInTx(
  tx: Tx,
  record: Recorder,
  call: AdminCall,
  userId: string,
  change: StateChange,
  reason: string,
): Promise<UserRow> {
  const rule = TRANSITIONS[change];
  const user = await requireUser(tx, call.realmId, userId);
  if (!rule.from.includes(user.state)) {
    throw problem.conflict(`cannot ${change} an account in state ${user.state}`);
  }
  await setUserState(tx, call.realmId, userId, rule.to, call.now);
  const revoked =
    change === 'reactivate'
      ? null
      : await endAccountSessions(tx, call.realmId, userId, `user_${rule.to}`, call.now, call.correlationId);
  await record.audit(rule.audit, {
    category: 'security',
    subject: userSubject(userId),
    reason,
    data: { from: user.state, state: rule.to, ...(revoked ? revocationCounts(revoked) : {}) },
  });
  const data = { user_id: userId, state: rule.to };
  if (change === 'suspend') await record.event('user.suspended', data);
  else if (change === 'lock') await record.event('user.locked', data);
  // The administrator's text stays in the audit record; the event carries a code.
  else await record.event('user.reactivated', { ...data, reason: 'ADMINISTRATOR_REACTIVATED' });
  return { ...user, state: rule.to, updated_at: call.now };
}

export async function revokeAccountSessions(
  db: Db,
  call: AdminCall,
  userId: string,
  reason: string | null,
): Promise<AccountRevocation> {
  return inChange(db, call, (tx, record) => revokeAccountSessionsInTx(tx, record, call, userId, reason));
}

/** The transactional part of revokeAccountSessions. */
export async function revokeAccountSessionsInTx(
  tx: Tx,
  record: Recorder,
  call: AdminCall,
  userId: string,
  reason: string | null,
): Promise<AccountRevocation> {
  await requireUser(tx, call.realmId, userId);
  const revoked = await endAccountSessions(
    tx,
    call.realmId,
    userId,
    'admin_revoked',
    call.now,
    call.correlationId,
  );
  await record.audit('user.sessions_revoked', {
    category: 'security',
    subject: userSubject(userId),
    reason,
    data: revocationCounts(revoked),
  });
  return revoked;
}

/**
 * Adds a required action the account meets at its next sign-in (a bulk action; users.decode.ts
 * lists the ones an administrator may set). Answers false when the account already has it.
 */
export async function addAccountRequiredActionInTx(
  tx: Tx,
  record: Recorder,
  call: AdminCall,
  userId: string,
  action: string,
  reason: string | null,
): Promise<boolean> {
  const user = await requireUser(tx, call.realmId, userId);
  if (user.required_actions.includes(action)) return false;
  await addRequiredAction(tx, call.realmId, userId, action, call.now);
  await record.audit('user.required_action.added', {
    category: 'identity',
    subject: userSubject(userId),
    reason,
    data: { required_action: action },
  });
  return true;
}

export async function deleteAccount(db: Db, call: AdminCall, userId: string): Promise<void> {
  refuseSelf(call, userId);
  await inChange(db, call, (tx, record) => deleteAccountInTx(tx, record, call, userId));
}

/** The transactional part of deleteAccount: ends every session and erases the account. */
export async function deleteAccountInTx(
  tx: Tx,
  record: Recorder,
  call: AdminCall,
  userId: string,
): Promise<void> {
  const user = await requireUser(tx, call.realmId, userId);
  const revoked = await endAccountSessions(
    tx,
    call.realmId,
    userId,
    'user_deleted',
    call.now,
    call.correlationId,
  );
  await eraseAccount(tx, call.realmId, userId, call.now);
  await record.audit('user.deleted', {
    category: 'identity',
    subject: userSubject(userId),
    data: { from: user.state, ...revocationCounts(revoked) },
  });
  await record.event('user.deleted', { user_id: userId });
}
