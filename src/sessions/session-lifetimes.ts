// SSO session and refresh family lifetimes (document 1, Limits: Sessions), as a realm's policy
// sets them (docs/policy.md "sessions" and "tokens"; docs/signin.md "Session lifetimes"). The
// callers read the policy they already hold and pass its sections in; the lengths are written on
// the session or family when it starts, so later activity extends it without a policy read.
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export interface Lifetimes {
  idleMs: number;
  absoluteMs: number;
}

/** What a realm's `sessions` section decides, members absent taking the spec's defaults. */
export interface SessionPolicy {
  idleMs: number;
  absoluteMs: number;
  /** How long a remember-me session lasts at most (remember_me_days). */
  rememberAbsoluteMs: number;
}

export const DEFAULT_SESSION_POLICY: SessionPolicy = {
  idleMs: 30 * MINUTE,
  absoluteMs: 12 * HOUR,
  rememberAbsoluteMs: 30 * DAY,
};
/** The idle length of a remember-me session (the spec's 7 days), never beyond its absolute one. */
export const REMEMBERED_IDLE_MS = 7 * DAY;
/** A transient session ends with the browser and lasts at most an hour whatever the policy says. */
export const TRANSIENT_ABSOLUTE_MS = HOUR;
/** Offline refresh families (offline_access) by default: 7 days idle, 30 days absolute. */
export const DEFAULT_OFFLINE_LIFETIMES: Lifetimes = { idleMs: 7 * DAY, absoluteMs: 30 * DAY };

/** A whole number in [min, max], else undefined (the policy checks ranges; this stays defensive). */
function member(section: unknown, name: string, min: number, max: number): number | undefined {
  if (!section || typeof section !== 'object' || Array.isArray(section)) return undefined;
  const v = (section as Record<string, unknown>)[name];
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max ? v : undefined;
}

/** The realm policy's `sessions` section as lengths (ranges as in realms/policy-schema.ts). */
export function sessionPolicyOf(sessions: unknown): SessionPolicy {
  const idle = member(sessions, 'idle_timeout_minutes', 5, 10080);
  const absolute = member(sessions, 'absolute_timeout_hours', 1, 720);
  const remember = member(sessions, 'remember_me_days', 1, 90);
  return {
    idleMs: idle === undefined ? DEFAULT_SESSION_POLICY.idleMs : idle * MINUTE,
    absoluteMs: absolute === undefined ? DEFAULT_SESSION_POLICY.absoluteMs : absolute * HOUR,
    rememberAbsoluteMs: remember === undefined ? DEFAULT_SESSION_POLICY.rememberAbsoluteMs : remember * DAY,
  };
}

/** The realm policy's `tokens` section: the lengths of a new offline refresh family. */
export function offlineLifetimesOf(tokens: unknown): Lifetimes {
  const idle = member(tokens, 'refresh_token_idle_days', 1, 90);
  const absolute = member(tokens, 'refresh_token_absolute_days', 1, 365);
  const absoluteMs = absolute === undefined ? DEFAULT_OFFLINE_LIFETIMES.absoluteMs : absolute * DAY;
  const idleMs = idle === undefined ? DEFAULT_OFFLINE_LIFETIMES.idleMs : idle * DAY;
  return { idleMs: Math.min(idleMs, absoluteMs), absoluteMs };
}

/**
 * The lengths of a new session of this kind. A transient session lasts at most an hour. Remember-me
 * lasts remember_me_days, idling up to 7 days within that, and never ends sooner than the same
 * session without it would. The idle length never exceeds the absolute one.
 */
export function lifetimesFor(
  kind: { rememberMe: boolean; transient: boolean },
  p: SessionPolicy = DEFAULT_SESSION_POLICY,
): Lifetimes {
  let absoluteMs = p.absoluteMs;
  let idleMs = p.idleMs;
  if (kind.transient) absoluteMs = Math.min(absoluteMs, TRANSIENT_ABSOLUTE_MS);
  else if (kind.rememberMe) {
    absoluteMs = Math.max(absoluteMs, p.rememberAbsoluteMs);
    idleMs = Math.max(idleMs, Math.min(REMEMBERED_IDLE_MS, p.rememberAbsoluteMs));
  }
  return { idleMs: Math.min(idleMs, absoluteMs), absoluteMs };
}

/** The idle expiry after activity at `now`: the idle length on, never past the absolute expiry. */
export const idleUntil = (now: Date, idleSeconds: number, absoluteExpiresAt: Date): Date =>
  new Date(Math.min(now.getTime() + idleSeconds * 1000, absoluteExpiresAt.getTime()));
