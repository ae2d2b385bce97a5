// SSO session lifetimes (spec doc 1, Limits: Sessions).
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export interface Lifetimes {
  idleMs: number;
  absoluteMs: number;
}

export const STANDARD: Lifetimes = { idleMs: 30 * MINUTE, absoluteMs: 12 * HOUR };
export const REMEMBERED: Lifetimes = { idleMs: 7 * DAY, absoluteMs: 30 * DAY };
/** A transient session ends with the browser and lasts at most an hour anyway. */
export const TRANSIENT: Lifetimes = { idleMs: 30 * MINUTE, absoluteMs: HOUR };

export function lifetimesFor(s: { rememberMe: boolean; transient: boolean }): Lifetimes {
  if (s.transient) return TRANSIENT;
  return s.rememberMe ? REMEMBERED : STANDARD;
}
