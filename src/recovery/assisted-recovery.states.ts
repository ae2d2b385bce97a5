// The assisted recovery request's states (document 1 "Assisted recovery request", state table;
// Limits: unexecuted requests expire seven days after effective_at):
//
//   (immediate mode) ─────────────────────────────────────────────────► executed
//   scheduled ──approve (operator ≠ requester, ≠ owner)──► approved
//   scheduled | approved ──recovery.assisted_due: due, approved when needed, re-checks pass──► executed
//   scheduled | approved ──re-check failure | owner cancel | account deletion──► cancelled
//   scheduled | approved ──seven days after effective_at──► expired
//
// Owner cancel applies to `scheduled` only, as the table says ("before it runs"); an approved
// request is cancelled by its owner too (decision in docs/decisions.md): approval does not take the
// owner's veto away.

export type RecoveryStatus = 'scheduled' | 'approved' | 'executed' | 'cancelled' | 'expired';

/** Seven days after effective_at an unexecuted request expires. */
export const RECOVERY_EXPIRY_MS = 7 * 24 * 3_600_000;

/** How long the setup link mailed at execution works (decision in docs/decisions.md). */
export const SETUP_LINK_TTL_MS = 24 * 3_600_000;

export const OPEN_STATUSES: readonly RecoveryStatus[] = ['scheduled', 'approved'];

export const isOpen = (s: string): boolean => (OPEN_STATUSES as readonly string[]).includes(s);

/** Why a due request did not run (the re-check failures of the state table). */
export type RecheckFailure = 'account_unavailable' | 'requester_no_longer_authorized' | 'contact_unverified';

export interface DueFacts {
  status: string;
  effectiveAt: Date;
  expiresAt: Date;
  approvalRequired: boolean;
}

/** What the due task does with one request at `now`. */
export function dueMove(r: DueFacts, now: Date): 'expire' | 'run' | 'wait' {
  if (!isOpen(r.status)) return 'wait';
  if (now.getTime() >= r.expiresAt.getTime()) return 'expire';
  if (now.getTime() < r.effectiveAt.getTime()) return 'wait';
  if (r.approvalRequired && r.status !== 'approved') return 'wait';
  return 'run';
}
