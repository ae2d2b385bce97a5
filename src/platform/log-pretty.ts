// The human log format for a developer's terminal: `12:04:05.120 INFO  message key=value ...`,
// coloured when the output is a terminal. It reformats pino's JSON lines, so redaction (log.ts)
// has already happened; an unparsable line is passed through as it came.

const LEVELS: Record<number, [name: string, colour: number]> = {
  10: ['TRACE', 90],
  20: ['DEBUG', 90],
  30: ['INFO ', 32],
  40: ['WARN ', 33],
  50: ['ERROR', 31],
  60: ['FATAL', 35],
};
// Members every line has, shown in the fixed part of the line or not at all.
const FIXED = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname']);

const value = (v: unknown): string => {
  if (typeof v === 'string') return /^[^\s"=]+$/.test(v) ? v : JSON.stringify(v);
  return JSON.stringify(v) ?? String(v);
};

export function prettyLine(line: string, colour: boolean): string {
  let entry: Record<string, unknown>;
  try {
    entry = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const [name, code] = LEVELS[Number(entry.level)] ?? ['LOG  ', 0];
  const time = new Date(Number(entry.time)).toISOString().slice(11, 23);
  const paint = (s: string, c: number) => (colour && c ? `\u001b[${c}m${s}\u001b[0m` : s);
  let stack = '';
  const fields: string[] = [];
  for (const [k, v] of Object.entries(entry)) {
    if (FIXED.has(k)) continue;
    const err = v as { message?: unknown; stack?: unknown } | null;
    if (k === 'err' && err && typeof err === 'object' && typeof err.stack === 'string') {
      stack = `\n    ${err.stack.split('\n').join('\n    ')}`;
      fields.push(`err=${value(err.message)}`);
    } else {
      fields.push(`${paint(k, 90)}=${value(v)}`);
    }
  }
  return `${paint(time, 90)} ${paint(name, code)} ${String(entry.msg ?? '')}${fields.length ? ` ${fields.join(' ')}` : ''}${stack}\n`;
}

/** A pino destination writing the human format to `out`. */
export function prettyStream(out: NodeJS.WritableStream): { write(chunk: string): boolean } {
  const colour = (out as { isTTY?: boolean }).isTTY === true && !process.env.NO_COLOR;
  return {
    write(chunk: string): boolean {
      const lines = chunk.split('\n').filter((l) => l !== '');
      return out.write(lines.map((l) => prettyLine(l, colour)).join(''));
    },
  };
}
