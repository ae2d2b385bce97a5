// Signing key lifecycle (spec doc 2, "Signing key"):
//
//   (new) --planned rotation--> pending --prepublish period over--> active --next key activated--> retiring
//   retiring --publish_until passed--> retired          active --emergency rotation--> compromised
//
// Exactly one key per realm is active. These pure rules say which transitions are due; the task
// applies them, each realm in its own transaction.

export interface KeyTimings {
  prepublishPeriodMs: number;
  rotationIntervalMs: number;
  retirementPeriodMs: number;
  maxAccessTokenTtlMs: number;
}

export const pendingIsDue = (createdAt: Date, now: Date, t: KeyTimings): boolean =>
  now.getTime() - createdAt.getTime() >= t.prepublishPeriodMs;

export const activeNeedsSuccessor = (activatedAt: Date, now: Date, t: KeyTimings): boolean =>
  now.getTime() - activatedAt.getTime() >= t.rotationIntervalMs;

/** A key stays published after it stops signing until every token it signed has expired, plus a margin. */
export const publishUntil = (now: Date, t: KeyTimings): Date =>
  new Date(now.getTime() + t.maxAccessTokenTtlMs + t.retirementPeriodMs);
