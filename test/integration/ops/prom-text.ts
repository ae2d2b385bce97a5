// A reader for the Prometheus text exposition format (0.0.4), enough to find samples and to check
// what promtool does not: that no series appears twice.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
  /** name plus labels in sorted order: the identity of a series. */
  series: string;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: \d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseSamples(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, '$1');
    const sorted = Object.keys(labels)
      .sort()
      .map((k) => `${k}=${JSON.stringify(labels[k])}`)
      .join(',');
    out.push({ name: m[1]!, labels, value: Number(m[3]), series: `${m[1]}{${sorted}}` });
  }
  return out;
}

/** Series identities that appear more than once. */
export function duplicateSeries(text: string): string[] {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const s of parseSamples(text)) (seen.has(s.series) ? dup : seen).add(s.series);
  return [...dup];
}

/** Metric families whose HELP or TYPE line appears more than once. */
export function repeatedFamilies(text: string): string[] {
  const seen = new Set<string>();
  const dup = new Set<string>();
  for (const line of text.split('\n')) {
    const m = /^# (HELP|TYPE) (\S+)/.exec(line);
    if (!m) continue;
    const key = `${m[1]} ${m[2]}`;
    (seen.has(key) ? dup : seen).add(key);
  }
  return [...dup];
}

/** The value of the one sample with exactly these labels, or undefined. */
export function sampleValue(
  text: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const want = JSON.stringify(Object.entries(labels).sort());
  return parseSamples(text).find(
    (s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === want,
  )?.value;
}

/** The TYPE line of a family, e.g. "gauge". */
export function familyType(text: string, name: string): string | undefined {
  return new RegExp(`^# TYPE ${name} (\\S+)$`, 'm').exec(text)?.[1];
}
