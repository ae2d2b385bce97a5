// Go-style duration strings for operator settings (`250ms`, `10m`, `1h30m`), plus `d` for days
// because retention and rotation periods are naturally written in days (`90d`, `400d`).

const UNIT_MS = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1_000, ms: 1 } as const;
type Unit = keyof typeof UNIT_MS;

// `ms` must be tried before `m` so `250ms` is not read as 250 minutes followed by junk.
const PART = /(\d+(?:\.\d+)?)(ms|d|h|m|s)/y;

/** Parses a duration string into whole milliseconds; throws on anything it does not understand. */
export function parseDuration(s: string): number {
  const text = s.trim();
  if (text === '0') return 0;
  if (text === '') throw new Error('invalid duration "": empty');
  let total = 0;
  let pos = 0;
  const seen = new Set<Unit>();
  while (pos < text.length) {
    PART.lastIndex = pos;
    const m = PART.exec(text);
    if (!m) throw new Error(invalid(s));
    const unit = m[2] as Unit;
    // Repeats (`1h1h`) are legal in Go but almost always a typo in a config file.
    if (seen.has(unit)) throw new Error(`${invalid(s)}: unit "${unit}" repeated`);
    seen.add(unit);
    total += partMs(m[1]!, UNIT_MS[unit], s);
    pos = PART.lastIndex;
  }
  if (!Number.isSafeInteger(total)) {
    throw new Error(`${invalid(s)}: must be a whole number of milliseconds within range`);
  }
  return total;
}

// Integer and fraction are scaled separately so `1.1s` is exactly 1100, not 1100.0000000000002.
function partMs(num: string, unitMs: number, s: string): number {
  const [int, frac] = num.split('.');
  const fracMs = frac ? Number(`0.${frac}`) * unitMs : 0;
  const rounded = Math.round(fracMs);
  if (Math.abs(fracMs - rounded) > 1e-6) throw new Error(`${invalid(s)}: finer than a millisecond`);
  return Number(int) * unitMs + rounded;
}

function invalid(s: string): string {
  return `invalid duration ${JSON.stringify(s)} (expected e.g. 250ms, 60s, 10m, 1h30m, 7d or 0)`;
}

/** Renders milliseconds in the same syntax, largest units first, so it parses back to the same value. */
export function formatDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new Error(`cannot format duration ${ms}`);
  if (ms === 0) return '0s';
  let rest = ms;
  let out = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms'] as const) {
    const n = Math.floor(rest / UNIT_MS[unit]);
    if (n > 0) {
      out += `${n}${unit}`;
      rest -= n * UNIT_MS[unit];
    }
  }
  return out;
}
