// One circuit per connection (docs/federation.md, When the upstream is down): after a run of
// failures to reach an upstream provider, calls to it fail at once for a cool-down, so a dead
// provider costs no request slot and no timeout; the first call after the cool-down tries again
// (half open) and its outcome closes or reopens the circuit. Per process, like the key-set cache.

export interface CircuitSettings {
  /** Consecutive failures that open the circuit. */
  failures: number;
  /** How long an open circuit refuses calls. */
  coolDownMs: number;
}

export const CIRCUIT_DEFAULTS: CircuitSettings = { failures: 3, coolDownMs: 30_000 };

interface CircuitState {
  failures: number;
  openUntil: number;
  /** A half-open trial is under way: further calls keep failing fast until it ends. */
  trial: boolean;
}

export class UpstreamCircuits {
  readonly #states = new Map<string, CircuitState>();
  readonly #settings: CircuitSettings;

  constructor(settings: CircuitSettings = CIRCUIT_DEFAULTS) {
    this.#settings = settings;
  }

  /** May a call to this upstream go out now? An open circuit lets one trial through after its cool-down. */
  admit(key: string, now: number): boolean {
    const s = this.#states.get(key);
    if (!s || s.failures < this.#settings.failures) return true;
    if (now < s.openUntil || s.trial) return false;
    s.trial = true;
    return true;
  }

  succeeded(key: string): void {
    this.#states.delete(key);
  }

  failed(key: string, now: number): void {
    const s = this.#states.get(key) ?? { failures: 0, openUntil: 0, trial: false };
    s.failures += 1;
    s.trial = false;
    if (s.failures >= this.#settings.failures) s.openUntil = now + this.#settings.coolDownMs;
    this.#states.set(key, s);
  }

  /** Forgets a connection's history (it was changed or enabled again). */
  reset(key: string): void {
    this.#states.delete(key);
  }
}
