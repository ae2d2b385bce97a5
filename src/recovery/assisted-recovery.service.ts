// Assisted recovery (document 1 "Assisted recovery request" with its state table, "Recovery and
// account administration" and the /me rows; docs/recovery.md): an operator holding
// support.recovery.assist asks to recover an account whose owner lost every factor. Immediate mode
// runs at once; cooling-off mode (recovery.cooling_off_hours > 0 or recovery.require_approval)
// schedules it, mails the owner so they can cancel, and leaves it to the worker task
// recovery.assisted_due. Every change commits with its audit record and events in one transaction.
import { createHash } from 'node:crypto';
import { inChange, type Recorder, recorder } from '../audit/index.ts';
import { BUILTIN_LOGIN_UI_PATH } from '../clients/builtin-clients.ts';
import { type Actor, type Call, systemCall } from '../kernel/call.ts';
import { resetSecondFactors } from '../mfa/index.ts';
import { enqueueNotification, localeOf } from '../notifications/index.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import { newId, randomToken } from '../platform/ids.ts';
import { brandNameOf, currentPolicy, findRealmById, policyValue } from '../realms/index.ts';
import { standingOf } from '../roles/index.ts';
import { endAccountSessions } from '../sessions/index.ts';
import {
  addRequiredAction,
  keepReplacedPassword,
  lockUser,
  type PasswordHasher,
  passwordsRefused,
  primaryEmailContact,
  refuseReusedPassword,
  refuseWeakPassword,
  removeRequiredAction,
  setPassword,
} from '../users/index.ts';
import {
  insertRecovery,
  lockBySetupDigest,
  lockRecovery,
  markApproved,
  markCancelled,
  markExecuted,
  markExpired,
  markSetupUsed,
  openRecoveriesOf,
  type RecoveryRow,
  recoveriesOf,
} from './assisted-recoveries.repo.ts';
import {
  dueMove,
  isOpen,
  RECOVERY_EXPIRY_MS,
  type RecheckFailure,
  SETUP_LINK_TTL_MS,
} from './assisted-recovery.states.ts';

export interface RecoveryDeps {
  db: Db;
  /** Seals queued mail; null where no root key is configured (requests then answer 503). */
  keyring: RootKeyring | null;
  publicOrigin: string;
}

export const ASSIST_PERMISSION = 'support.recovery.assist';
/** Also needed when the request takes the account's second factors (reset_mfa). */
export const CREDENTIALS_PERMISSION = 'realm.users.credentials.manage';

export interface RecoveryRequestInput {
  reason: string;
  evidenceReference: string | null;
  resetMfa: boolean;
}

/** The record's wire form (document 1, "Other records named": recovery_id, status, effective_at, approval_required). */
export interface RecoveryView {
  recovery_id: string;
  status: string;
  effective_at: string;
  approval_required: boolean;
  expires_at: string;
  reset_mfa: boolean;
  created_at: string;
}

export const presentRecovery = (r: RecoveryRow): RecoveryView => ({
  recovery_id: r.id,
  status: r.status,
  effective_at: r.effective_at.toISOString(),
  approval_required: r.approval_required,
  expires_at: r.expires_at.toISOString(),
  reset_mfa: r.reset_mfa,
  created_at: r.created_at.toISOString(),
});

const subjectOf = (userId: string) => ({ type: 'user', id: userId });

const unverified = () =>
  new Problem(
    409,
    'contact_unverified',
    'the account has no verified primary email address to send the setup link to',
  );

function requireKeyring(deps: RecoveryDeps): RootKeyring {
  if (!deps.keyring) throw problem.unavailable('no root key is configured to seal outgoing messages');
  return deps.keyring;
}

/** The realm's login UI (policy interaction.login_ui_url, else the built-in one) carrying the setup token. */
function setupLink(deps: RecoveryDeps, realmName: string, configured: unknown, token: string): string {
  let url: URL;
  try {
    url = new URL(typeof configured === 'string' && configured !== '' ? configured : '');
  } catch {
    url = new URL(`${deps.publicOrigin}${BUILTIN_LOGIN_UI_PATH}`);
  }
  url.searchParams.set('realm', realmName);
  url.searchParams.set('recovery_setup', token);
  return url.toString();
}

export const setupDigest = (realmId: string, token: string): string =>
  createHash('sha256').update(`assisted-recovery\u0000${realmId}\u0000${token}`).digest('hex');

/** "2026-11-30 14:00 UTC": the owner's mail names the time without a locale-specific format. */
const utcText = (d: Date) => `${d.toISOString().slice(0, 16).replace('T', ' ')} UTC`;

// ---- request -----------------------------------------------------------------------------------

export interface RequestOutcome {
  scheduled: boolean;
  row: RecoveryRow;
}

export async function requestRecovery(
  deps: RecoveryDeps,
  call: Call,
  userId: string,
  input: RecoveryRequestInput,
): Promise<RequestOutcome> {
  const keyring = requireKeyring(deps);
  const requester = call.actor;
  const requesterId = requester.id;
  if (requesterId === null) throw problem.forbidden('the requester must be an operator');
  // An operator does not recover their own account (decision in docs/decisions.md).
  if (requester.type === 'user' && requester.id === userId)
    throw problem.forbidden('an operator cannot request recovery of their own account');
  return inChange(deps.db, call, async (tx, record) => {
    const user = await lockUser(tx, call.realmId, userId);
    if (!user) throw problem.notFound('no such user');
    const contact = await primaryEmailContact(tx, call.realmId, userId);
    if (!contact?.verified) throw unverified();
    if ((await openRecoveriesOf(tx, call.realmId, userId)).length > 0)
      throw problem.conflict('the account already has a pending assisted recovery');
    const policy = await currentPolicy(tx, call.realmId);
    const hours = Number(policyValue(policy, 'recovery', 'cooling_off_hours') ?? 0);
    const approvalRequired = policyValue(policy, 'recovery', 'require_approval') === true;
    const coolingOff = hours > 0 || approvalRequired;
    const effectiveAt = new Date(call.now.getTime() + hours * 3_600_000);
    const id = newId('arc', call.now.getTime());
    await insertRecovery(
      tx,
      {
        realmId: call.realmId,
        id,
        userId,
        status: 'scheduled',
        mode: coolingOff ? 'cooling_off' : 'immediate',
        reason: input.reason,
        evidenceReference: input.evidenceReference,
        resetMfa: input.resetMfa,
        approvalRequired,
        requestedBy: { type: requester.type, id: requesterId },
        effectiveAt,
        expiresAt: new Date(effectiveAt.getTime() + RECOVERY_EXPIRY_MS),
      },
      call.now,
    );
    const row = (await lockRecovery(tx, call.realmId, id)) as RecoveryRow;
    const realm = await findRealmById(tx, call.realmId);
    if (!realm) throw problem.notFound('no such realm');
    const brand = brandNameOf(realm, policy);
    if (!coolingOff) {
      const done = await executeInTx(tx, record, deps, keyring, row, {
        realmName: realm.name,
        brand,
        loginUi: policyValue(policy, 'interaction', 'login_ui_url'),
        email: contact.email,
        locale: contact.locale,
        now: call.now,
        correlationId: call.correlationId ?? id,
      });
      return { scheduled: false, row: done };
    }
    await record.audit('recovery.assisted.scheduled', {
      category: 'security',
      subject: subjectOf(userId),
      target: { type: 'assisted_recovery', id },
      reason: input.reason,
      data: {
        recovery_id: id,
        effective_at: effectiveAt.toISOString(),
        approval_required: approvalRequired,
        reset_mfa: input.resetMfa,
        ...(input.evidenceReference ? { evidence_reference: input.evidenceReference } : {}),
      },
    });
    // The owner hears of it at once, so they can cancel before it runs.
    await enqueueNotification(
      tx,
      keyring,
      {
        realmId: call.realmId,
        channel: 'email',
        template: 'recovery_scheduled',
        locale: localeOf(contact.locale),
        to: contact.email,
        vars: { realm: brand, when: utcText(effectiveAt) },
      },
      call.now,
    );
    return { scheduled: true, row };
  });
}

// ---- approve and cancel ------------------------------------------------------------------------

/** Approval by an operator other than the requester and the owner (document 1, state table). */
export async function approveRecovery(
  db: Db,
  call: Call,
  id: string,
  held: ReadonlySet<string> | 'everything',
): Promise<RecoveryRow> {
  return inChange(db, call, async (tx, record) => {
    const row = await lockRecovery(tx, call.realmId, id);
    if (!row) throw problem.notFound('no such assisted recovery');
    if (row.reset_mfa && held !== 'everything' && !held.has(CREDENTIALS_PERMISSION))
      throw problem.forbidden(
        `approving a recovery that resets MFA needs the permission ${CREDENTIALS_PERMISSION}`,
      );
    const approver = call.actor;
    if (approver.type === row.requested_by_type && approver.id === row.requested_by_id)
      throw problem.forbidden('the approver must be someone other than the requester');
    if (approver.type === 'user' && approver.id === row.user_id)
      throw problem.forbidden('the approver must be someone other than the account owner');
    if (row.status !== 'scheduled' || !row.approval_required)
      throw problem.conflict(
        row.approval_required ? `the recovery is ${row.status}` : 'the recovery needs no approval',
      );
    await markApproved(tx, call.realmId, id, approver, call.now);
    await record.audit('recovery.assisted.approved', {
      category: 'security',
      subject: subjectOf(row.user_id),
      target: { type: 'assisted_recovery', id },
      data: { recovery_id: id, requested_by_id: row.requested_by_id },
    });
    return { ...row, status: 'approved', approved_by_id: approver.id, approved_at: call.now };
  });
}

/** The owner's cancel (POST /me/assisted-recoveries/{id}/cancel); another account's request is not found. */
export async function ownerCancelRecovery(
  db: Db,
  call: Call,
  ownerId: string,
  id: string,
): Promise<RecoveryRow> {
  return inChange(db, call, async (tx, record) => {
    const row = await lockRecovery(tx, call.realmId, id);
    if (!row || row.user_id !== ownerId) throw problem.notFound('no such assisted recovery');
    if (!isOpen(row.status)) throw problem.conflict(`the recovery is ${row.status}`);
    await markCancelled(tx, call.realmId, id, call.actor, 'owner_cancelled', call.now);
    await record.audit('recovery.assisted.cancelled', {
      category: 'security',
      subject: subjectOf(ownerId),
      target: { type: 'assisted_recovery', id },
      reason: 'owner_cancelled',
      data: { recovery_id: id, from: row.status },
    });
    return { ...row, status: 'cancelled', cancel_reason: 'owner_cancelled', cancelled_at: call.now };
  });
}

/** The owner's view: the account's requests, newest first. */
export const ownerRecoveries = (db: Db, realmId: string, ownerId: string, limit: number) =>
  recoveriesOf(db, realmId, ownerId, limit);

// ---- execution ---------------------------------------------------------------------------------

interface ExecutionContext {
  realmName: string;
  brand: string;
  loginUi: unknown;
  email: string;
  locale: string | null;
  now: Date;
  correlationId: string;
}

/**
 * Runs a recovery in the caller's transaction: second factors taken when asked, configure_totp
 * set, every session, grant and token of the account ended (the account-wide revocation, whose
 * rows the revocation log's triggers record), the single-use setup link queued to the verified
 * primary address, and the audit record recovery.assisted (signal factor_recovery).
 */
async function executeInTx(
  tx: Tx,
  record: Recorder,
  deps: RecoveryDeps,
  keyring: RootKeyring,
  row: RecoveryRow,
  x: ExecutionContext,
): Promise<RecoveryRow> {
  const { realm_id: realmId, user_id: userId, id } = row;
  const factors = row.reset_mfa ? await resetSecondFactors(tx, realmId, userId, x.now) : null;
  await addRequiredAction(tx, realmId, userId, 'configure_totp', x.now);
  const revoked = await endAccountSessions(tx, realmId, userId, 'assisted_recovery', x.now, x.correlationId);
  const token = randomToken(32);
  const setupExpiresAt = new Date(x.now.getTime() + SETUP_LINK_TTL_MS);
  await markExecuted(
    tx,
    realmId,
    id,
    { digest: setupDigest(realmId, token), expiresAt: setupExpiresAt },
    x.now,
  );
  await enqueueNotification(
    tx,
    keyring,
    {
      realmId,
      channel: 'email',
      template: 'recovery_setup',
      locale: localeOf(x.locale),
      to: x.email,
      vars: {
        realm: x.brand,
        link: setupLink(deps, x.realmName, x.loginUi, token),
        hours: Math.round(SETUP_LINK_TTL_MS / 3_600_000),
      },
    },
    x.now,
  );
  await record.audit('recovery.assisted', {
    category: 'security',
    subject: subjectOf(userId),
    target: { type: 'assisted_recovery', id },
    signal: 'factor_recovery',
    ...(row.reason ? { reason: row.reason } : {}),
    data: {
      recovery_id: id,
      mode: row.mode,
      reset_mfa: row.reset_mfa,
      requested_by_id: row.requested_by_id,
      ...(row.approved_by_id ? { approved_by_id: row.approved_by_id } : {}),
      sessions_revoked: revoked.sessions.length,
      grants_revoked: revoked.grants,
      ...(factors
        ? {
            factors_removed: {
              totp: factors.totp,
              hotp: factors.hotp,
              passkeys: factors.passkeys,
              recovery_codes: factors.recoveryCodes,
            },
          }
        : {}),
    },
  });
  return { ...row, status: 'executed', executed_at: x.now, setup_expires_at: setupExpiresAt };
}

/** Why a due request may not run now, or null when every re-check passes. */
async function recheck(
  tx: Tx,
  row: RecoveryRow,
  now: Date,
): Promise<{ failure: RecheckFailure } | { email: string; locale: string | null }> {
  const user = await lockUser(tx, row.realm_id, row.user_id);
  if (!user || user.state === 'pending_deletion') return { failure: 'account_unavailable' };
  const requester: Actor = {
    type: row.requested_by_type as Actor['type'],
    id: row.requested_by_id,
  };
  const standing = await standingOf(tx, row.realm_id, requester, null, now);
  const holds = (p: string) => standing.everything === true || standing.permissions.has(p);
  if (!standing.active || !holds(ASSIST_PERMISSION) || (row.reset_mfa && !holds(CREDENTIALS_PERMISSION)))
    return { failure: 'requester_no_longer_authorized' };
  const contact = await primaryEmailContact(tx, row.realm_id, row.user_id);
  if (!contact?.verified) return { failure: 'contact_unverified' };
  return { email: contact.email, locale: contact.locale };
}

export type DueOutcome = 'executed' | 'expired' | RecheckFailure | 'not_due';

/**
 * One due request in its own transaction (the task recovery.assisted_due): expired seven days
 * after effective_at, cancelled with the failing re-check's code (actor system), or executed.
 */
export async function settleDueRecovery(
  deps: RecoveryDeps & { keyring: RootKeyring },
  realmId: string,
  id: string,
  now: Date,
): Promise<DueOutcome> {
  const call = systemCall(realmId, now);
  return inChange(deps.db, call, async (tx, record) => {
    const row = await lockRecovery(tx, realmId, id);
    if (!row) return 'not_due';
    const move = dueMove(
      {
        status: row.status,
        effectiveAt: row.effective_at,
        expiresAt: row.expires_at,
        approvalRequired: row.approval_required,
      },
      now,
    );
    if (move === 'wait') return 'not_due';
    if (move === 'expire') {
      await markExpired(tx, realmId, id, now);
      await record.audit('recovery.assisted.expired', {
        category: 'security',
        subject: subjectOf(row.user_id),
        target: { type: 'assisted_recovery', id },
        data: { recovery_id: id, from: row.status },
      });
      return 'expired';
    }
    const checked = await recheck(tx, row, now);
    if ('failure' in checked) {
      await markCancelled(tx, realmId, id, call.actor, checked.failure, now);
      await record.audit('recovery.assisted.cancelled', {
        category: 'security',
        subject: subjectOf(row.user_id),
        target: { type: 'assisted_recovery', id },
        reason: checked.failure,
        data: { recovery_id: id, from: row.status, code: checked.failure },
      });
      return checked.failure;
    }
    const realm = await findRealmById(tx, realmId);
    if (!realm) return 'not_due';
    const policy = await currentPolicy(tx, realmId);
    await executeInTx(tx, record, deps, deps.keyring, row, {
      realmName: realm.name,
      brand: brandNameOf(realm, policy),
      loginUi: policyValue(policy, 'interaction', 'login_ui_url'),
      email: checked.email,
      locale: checked.locale,
      now,
      correlationId: call.correlationId ?? id,
    });
    return 'executed';
  });
}

// ---- the setup link ----------------------------------------------------------------------------

/**
 * Following the setup link: the token (single use, SETUP_LINK_TTL_MS) sets a new password under the
 * realm's password rules. configure_totp stays, so the next sign-in enrolls an authenticator app.
 * An unknown, used or expired token answers 404 alike.
 */
export async function completeRecoverySetup(
  deps: { db: Db; hasher: PasswordHasher },
  realmId: string,
  token: string,
  password: string,
  now: Date,
  correlationId: string,
): Promise<void> {
  const digest = setupDigest(realmId, token);
  const peek = await deps.db.tx((tx) => lockBySetupDigest(tx, realmId, digest));
  const usable = (r: RecoveryRow | null): r is RecoveryRow =>
    r !== null && r.setup_used_at === null && r.setup_expires_at !== null && r.setup_expires_at > now;
  if (!usable(peek)) throw problem.notFound('the setup link is unknown, used or expired');
  const policy = await currentPolicy(deps.db, realmId);
  await refuseWeakPassword(policy, 'password', password, []);
  const who = { realmId, userId: peek.user_id };
  const refused = passwordsRefused(policy);
  // The slow hash checks run before any row lock is taken.
  await refuseReusedPassword(deps.db, deps.hasher, who, password, refused);
  const verifier = await deps.hasher.hash(password);
  const call: Call = { realmId, actor: { type: 'user', id: peek.user_id }, correlationId, now };
  await deps.db.tx(async (tx) => {
    const row = await lockBySetupDigest(tx, realmId, digest);
    if (!usable(row)) throw problem.notFound('the setup link is unknown, used or expired');
    const user = await lockUser(tx, realmId, row.user_id);
    if (!user || user.id !== who.userId) throw problem.notFound('the setup link is unknown, used or expired');
    await keepReplacedPassword(tx, who, refused, now);
    await setPassword(tx, realmId, row.user_id, verifier, now);
    await removeRequiredAction(tx, realmId, row.user_id, 'update_password', now);
    await markSetupUsed(tx, realmId, row.id, now);
    const record = recorder(tx, call);
    await endAccountSessions(tx, realmId, row.user_id, 'password_reset', now, correlationId);
    await record.auditWithEvent(
      'user.password_reset',
      {
        category: 'security',
        subject: subjectOf(row.user_id),
        data: { recovery_id: row.id, via: 'assisted_recovery_setup' },
      },
      { type: 'user.password_reset', data: { user_id: row.user_id } },
    );
  });
}
