// Time is passed in, never read ambiently in domain code, so tests can move it.
export interface Clock {
  now(): Date;
  /**
   * Resolves once now() reads `at` or later. A stopped test clock moves itself there; a clock
   * without it is waited on in real time (see waitUntil).
   */
  waitUntil?(at: Date): Promise<void>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, ms)));

export const systemClock: Clock = {
  now: () => new Date(),
  waitUntil: (at) => sleep(at.getTime() - Date.now()),
};

/**
 * Waits until `clock` reads `at` (at once when it already does). Callers wait outside any database
 * transaction: a wait holds nothing.
 */
export async function waitUntil(clock: Clock, at: Date): Promise<void> {
  const ms = at.getTime() - clock.now().getTime();
  if (ms <= 0) return;
  if (clock.waitUntil) await clock.waitUntil(at);
  else await sleep(ms);
}
