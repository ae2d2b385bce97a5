// Go `flag`-style argument parsing (node:util.parseArgs would read `-since` as `-s -i -n -c -e`):
// the spec writes `-since` and `--trust-email-verification` side by side, so one and two dashes
// mean the same thing.
// Unlike Go, flags and positional arguments may be interleaved. Help and error texts write the
// two-dash form, the one the README and docs/cli.md use.

export type FlagType = 'string' | 'bool' | 'int' | 'list';
export type FlagSpec = Record<string, { type: FlagType; default?: unknown }>;

export class FlagError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FlagError';
  }
}

const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

export function parseFlags(
  argv: string[],
  spec: FlagSpec,
): { flags: Record<string, unknown>; rest: string[] } {
  const flags: Record<string, unknown> = {};
  for (const [name, def] of Object.entries(spec)) {
    if (def.default !== undefined) flags[name] = Array.isArray(def.default) ? [...def.default] : def.default;
    else if (def.type === 'bool') flags[name] = false;
    else if (def.type === 'list') flags[name] = [];
  }
  const rest: string[] = [];
  // A list flag given on the command line replaces its default instead of appending to it.
  const listsSeen = new Set<string>();

  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      rest.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith('-') || arg === '-') {
      rest.push(arg);
      continue;
    }
    const body = arg.startsWith('--') ? arg.slice(2) : arg.slice(1);
    const eq = body.indexOf('=');
    const name = eq === -1 ? body : body.slice(0, eq);
    if (name === '' || name.startsWith('-')) throw new FlagError(`bad flag syntax: ${arg}`);
    const def = spec[name];
    if (!def) throw new FlagError(`unknown flag --${name}`);
    let value = eq === -1 ? undefined : body.slice(eq + 1);

    if (def.type === 'bool') {
      if (value === undefined || TRUE.has(value)) flags[name] = true;
      else if (FALSE.has(value)) flags[name] = false;
      else throw new FlagError(`invalid boolean value ${JSON.stringify(value)} for flag --${name}`);
      continue;
    }
    // As in Go, the next argument is the value even when it starts with a dash (`-n -5`).
    if (value === undefined) {
      if (i + 1 >= argv.length) throw new FlagError(`flag --${name} needs a value`);
      value = argv[++i]!;
    }
    if (def.type === 'int') {
      if (!/^-?\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
        throw new FlagError(`invalid value ${JSON.stringify(value)} for flag --${name}: not an integer`);
      }
      flags[name] = Number(value);
    } else if (def.type === 'list') {
      const prev = listsSeen.has(name) ? (flags[name] as string[]) : [];
      listsSeen.add(name);
      flags[name] = [...prev, value];
    } else {
      flags[name] = value;
    }
  }
  return { flags, rest };
}
