// Loads operator configuration: table defaults, then the file, then PROUDAUTH_* env vars, then
// programmatic overrides. Every problem is collected and reported at once, naming the setting
// and where its value came from, so an operator fixes a broken config in one pass.

import { readFileSync } from 'node:fs';
import { extname } from 'node:path';
import { isMap, isScalar, LineCounter, type Node, parseDocument, type YAMLError } from 'yaml';
import { normalizeDestinationPattern } from '../net/residency.ts';
import { formatDuration, parseDuration } from './duration.ts';
import {
  type Config,
  configPath,
  envVarName,
  normalizeCidr,
  normalizeOrigin,
  parseListen,
  SETTINGS,
  type Setting,
} from './settings.ts';

export { parseListen } from './settings.ts';

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

export interface LoadOptions {
  /** Config file path; undefined falls back to PROUDAUTH_CONFIG, null means no file. */
  file?: string | null;
  env?: NodeJS.ProcessEnv;
  overrides?: Record<string, unknown>;
}

type Value = string | number | boolean | null | string[];
interface Assigned {
  value: Value;
  origin: string;
}
type Refs = Map<string, Map<string, string>>;
interface Origin {
  kind: 'file' | 'env' | 'override';
  label: string;
}

const BY_NAME = new Map(SETTINGS.map((s) => [s.name, s]));
// Intermediate names (`server`, `keys.kms`) that may hold a nested mapping in the file.
const SECTIONS = new Set(
  SETTINGS.flatMap((s) =>
    s.name
      .split('.')
      .map((_, i, a) => a.slice(0, i).join('.'))
      .filter(Boolean),
  ),
);
const VERSION = /^[1-9]\d{0,9}$/;

export function loadConfig(opts: LoadOptions = {}): Config {
  const env = opts.env ?? process.env;
  const problems: string[] = [];
  const values = new Map<string, Assigned>();
  const refs: Refs = new Map();

  const assign = (s: Setting, raw: unknown, origin: Origin) => {
    const r = coerce(s, raw, origin.kind);
    if (!r.ok) problems.push(`${s.name} (${origin.label}): ${r.error}`);
    else values.set(s.name, { value: r.value, origin: origin.label });
  };
  const assignRef = (s: Setting, version: string, raw: unknown, origin: Origin) => {
    const where = `${s.name}.${version} (${origin.label})`;
    if (!VERSION.test(version) || Number(version) > 2 ** 31 - 1) {
      problems.push(`${where}: version must be a positive integer without leading zeros`);
    } else if (typeof raw !== 'string' || raw.trim() === '') {
      problems.push(`${where}: must be a non-empty reference string`);
    } else {
      refs.set(s.name, (refs.get(s.name) ?? new Map<string, string>()).set(version, raw.trim()));
    }
  };
  const assignAny = (s: Setting, raw: unknown, origin: Origin, originOf?: (name: string) => Origin) => {
    if (s.kind !== 'refs') return assign(s, raw, origin);
    if (!isMapping(raw))
      return problems.push(`${s.name} (${origin.label}): must be a mapping of version to reference`);
    for (const [v, ref] of Object.entries(raw)) assignRef(s, v, ref, originOf?.(`${s.name}.${v}`) ?? origin);
  };

  const file = opts.file === undefined ? (env.PROUDAUTH_CONFIG ?? null) : opts.file;
  if (file) {
    const read = readConfigFile(file, problems);
    const doc = read?.value ?? null;
    // Each setting's label carries the line and column of its key, so the message points there.
    const at = (name: string): Origin => {
      const pos = read?.positions.get(name);
      const where = pos ? `, line ${pos.line}, column ${pos.col}` : '';
      return { kind: 'file', label: `file ${file}${where}` };
    };
    const walk = (node: Record<string, unknown>, prefix: string) => {
      for (const [key, raw] of Object.entries(node)) {
        const name = prefix ? `${prefix}.${key}` : key;
        const origin = at(name);
        const s = BY_NAME.get(name);
        if (s) assignAny(s, raw, origin, at);
        else if (!SECTIONS.has(name)) problems.push(`${name} (${origin.label}): unknown setting`);
        else if (isMapping(raw)) walk(raw, name);
        else if (raw !== null) problems.push(`${name} (${origin.label}): must be a mapping of settings`);
      }
    };
    if (doc) walk(doc, '');
  }

  for (const s of SETTINGS) {
    const envName = envVarName(s.name);
    if (s.kind !== 'refs') {
      const raw = env[envName];
      if (raw !== undefined) assign(s, raw, { kind: 'env', label: `env ${envName}` });
      continue;
    }
    for (const [key, raw] of Object.entries(env)) {
      const version = key.startsWith(`${envName}_`) ? key.slice(envName.length + 1) : '';
      if (raw !== undefined && /^\d+$/.test(version))
        assignRef(s, version, raw, { kind: 'env', label: `env ${key}` });
    }
  }

  for (const [name, raw] of Object.entries(opts.overrides ?? {})) {
    const origin: Origin = { kind: 'override', label: 'override' };
    const s = BY_NAME.get(name);
    const mapSetting = SETTINGS.find((m) => m.kind === 'refs' && name.startsWith(`${m.name}.`));
    if (s) assignAny(s, raw, origin);
    else if (mapSetting) assignRef(mapSetting, name.slice(mapSetting.name.length + 1), raw, origin);
    else problems.push(`${name} (override): unknown setting`);
  }

  const config = build(values, refs);
  problems.push(...crossRules(config, (name) => values.get(name)?.origin ?? 'default'));
  if (problems.length) throw new ConfigError(problems);
  return config;
}

type Coerced = { ok: true; value: Value } | { ok: false; error: string };

// Env strings (and string overrides) are text to be parsed; file values must already have the
// right YAML/JSON type, so `port: "8080"` style mistakes surface instead of being guessed at.
function coerce(s: Setting, raw: unknown, from: Origin['kind']): Coerced {
  const ok = (value: Value): Coerced => ({ ok: true, value });
  const fail = (error: string): Coerced => ({ ok: false, error });
  const asText = from === 'env' || (from === 'override' && typeof raw === 'string');
  const nullable = 'nullable' in s && s.nullable === true;
  if (raw === null || (asText && raw === '')) return nullable ? ok(null) : fail('must be set');
  const got = 'secret' in s ? '' : ` (got ${JSON.stringify(raw).slice(0, 80)})`;
  try {
    switch (s.kind) {
      case 'string':
        if (typeof raw !== 'string') return fail('must be a string');
        return raw === '' ? (nullable ? ok(null) : fail('must not be empty')) : ok(raw);
      case 'int': {
        const n = asText && typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw) : raw;
        if (typeof n !== 'number' || !Number.isSafeInteger(n)) return fail(`must be an integer${got}`);
        return n < s.min || n > s.max ? fail(`must be between ${s.min} and ${s.max}${got}`) : ok(n);
      }
      case 'ratio': {
        const n = asText && typeof raw === 'string' && /^\d+(?:\.\d+)?$/.test(raw.trim()) ? Number(raw) : raw;
        if (typeof n !== 'number' || !Number.isFinite(n) || n < 0 || n > 1)
          return fail(`must be a number from 0 to 1${got}`);
        return ok(n);
      }
      case 'bool':
        if (typeof raw === 'boolean') return ok(raw);
        if (asText && (raw === 'true' || raw === 'false')) return ok(raw === 'true');
        return fail(`must be true or false${got}`);
      case 'duration': {
        // A bare number is only unambiguous from code, where Config already speaks milliseconds.
        const ms = typeof raw === 'string' ? parseDuration(raw) : from === 'override' ? raw : undefined;
        if (typeof ms !== 'number' || !Number.isSafeInteger(ms) || ms < 0) {
          return fail(`must be a duration such as 10m or 72h${got}`);
        }
        const [min, max] = [parseDuration(s.min), parseDuration(s.max)];
        if (ms < min || ms > max)
          return fail(`must be between ${formatDuration(min)} and ${formatDuration(max)}${got}`);
        return ok(ms);
      }
      case 'enum':
        return typeof raw === 'string' && s.values.includes(raw)
          ? ok(raw)
          : fail(`must be one of ${s.values.join(', ')}${got}`);
      case 'origin':
        return typeof raw === 'string' ? ok(normalizeOrigin(raw)) : fail('must be a string');
      case 'listen':
        if (typeof raw !== 'string') return fail('must be a string');
        parseListen(raw);
        return ok(raw);
      case 'cidrs': {
        const list = asText && typeof raw === 'string' ? raw.split(',').filter((x) => x.trim() !== '') : raw;
        if (!Array.isArray(list) || !list.every((x) => typeof x === 'string'))
          return fail('must be a list of CIDRs');
        return ok(list.map((x) => normalizeCidr(x.trim())));
      }
      case 'hosts': {
        const list = asText && typeof raw === 'string' ? raw.split(',').filter((x) => x.trim() !== '') : raw;
        if (!Array.isArray(list) || !list.every((x) => typeof x === 'string'))
          return fail('must be a list of host names');
        return ok(list.map((x) => normalizeDestinationPattern(x)));
      }
      case 'refs':
        return fail('is a mapping of versions');
    }
  } catch (err) {
    return fail((err as Error).message);
  }
}

function crossRules(c: Config, originOf: (name: string) => string): string[] {
  const problems: string[] = [];
  const add = (name: string, msg: string) => problems.push(`${name} (${originOf(name)}): ${msg}`);
  if (c.limits.defaultPageSize > c.limits.maxPageSize) {
    add('limits.default_page_size', `must not exceed limits.max_page_size (${c.limits.maxPageSize})`);
  }
  const versions = [
    ['keys.root', 'keys.active_version', c.keys.root, c.keys.activeVersion],
    ['keys.pepper', 'keys.pepper_active_version', c.keys.pepper, c.keys.pepperActiveVersion],
  ] as const;
  for (const [mapName, activeName, map, active] of versions) {
    const listed = Object.keys(map);
    if (active === null ? listed.length > 0 : !listed.includes(String(active))) {
      add(activeName, `must name a version listed in ${mapName} (listed: ${listed.join(', ') || 'none'})`);
    }
  }
  if (c.observability.tracing.enabled && c.observability.tracing.endpoint === null) {
    add('observability.tracing.endpoint', 'must be set when observability.tracing.enabled is true');
  }
  if (
    c.observability.tracing.endpoint !== null &&
    !/^https?:\/\/[^/]/.test(c.observability.tracing.endpoint)
  ) {
    add('observability.tracing.endpoint', 'must be an http or https URL');
  }
  const { mtlsListen, mtlsCertFile, mtlsKeyFile, mtlsOrigin } = c.server;
  if (mtlsListen !== null && (mtlsCertFile === null || mtlsKeyFile === null))
    add('server.mtls_listen', 'needs server.mtls_cert_file and server.mtls_key_file');
  if (mtlsOrigin !== null && !/^https:\/\/[^/?#]+$/.test(mtlsOrigin))
    add('server.mtls_origin', 'must be an https origin without a path');
  // Spec doc 2, Limits and Authentication 6 say why production is stricter; the rules are ours to name.
  if (c.environment === 'production') {
    if (!c.server.publicOrigin.startsWith('https://'))
      add('server.public_origin', 'must be https in production');
    if (c.delivery.allowPrivateWebhooks) add('delivery.allow_private_webhooks', 'is refused in production');
  }
  return problems;
}

function build(values: Map<string, Assigned>, refs: Refs): Config {
  const root: Record<string, unknown> = {};
  for (const s of SETTINGS) {
    const path = configPath(s);
    let node = root;
    for (const seg of path.slice(0, -1)) {
      node[seg] ??= {};
      node = node[seg] as Record<string, unknown>;
    }
    node[path[path.length - 1]!] = finalValue(s, values, refs);
  }
  // The table and Config are kept in step by the defaults test, which compares every member.
  return root as unknown as Config;
}

function finalValue(s: Setting, values: Map<string, Assigned>, refs: Refs): unknown {
  if (s.kind === 'refs') return Object.fromEntries(refs.get(s.name) ?? []);
  const assigned = values.get(s.name);
  if (assigned) return assigned.value;
  if (s.kind === 'duration') return parseDuration(s.default);
  if (s.kind === 'cidrs' || s.kind === 'hosts') return [...s.default];
  return s.default;
}

interface Position {
  line: number;
  col: number;
}
interface FileContent {
  value: Record<string, unknown>;
  /** Dotted setting name to the line and column (1-based) of its key in the file. */
  positions: Map<string, Position>;
}

function readConfigFile(file: string, problems: string[]): FileContent | null {
  const ext = extname(file).toLowerCase();
  if (!['.json', '.yaml', '.yml'].includes(ext)) {
    problems.push(`config file ${file}: unsupported extension (use .yaml, .yml or .json)`);
    return null;
  }
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    problems.push(`config file ${file}: cannot read (${(err as NodeJS.ErrnoException).code ?? String(err)})`);
    return null;
  }
  const parsed = ext === '.json' ? parseStrictJson(text) : parseYaml(text);
  if ('error' in parsed) {
    problems.push(`config file ${file}: ${parsed.error}`);
    return null;
  }
  if (parsed.value === null || parsed.value === undefined) return { value: {}, positions: new Map() };
  if (!isMapping(parsed.value)) {
    problems.push(`config file ${file}: top level must be a mapping of settings`);
    return null;
  }
  return { value: parsed.value, positions: keyPositions(text) };
}

type Parsed = { value: unknown } | { error: string };

function parseYaml(text: string): Parsed {
  const doc = parseDocument(text, { uniqueKeys: true });
  const first = doc.errors[0];
  if (first) return { error: `invalid YAML: ${describeYamlError(first)}` };
  return { value: doc.toJS() };
}

// JSON is YAML, so one walk over the YAML syntax tree finds key positions for both formats.
function keyPositions(text: string): Map<string, Position> {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines });
  const out = new Map<string, Position>();
  const visit = (node: Node | null | undefined, prefix: string) => {
    if (!isMap(node)) return;
    for (const pair of node.items) {
      const key = pair.key;
      if (!isScalar(key) || !key.range) continue;
      const name = prefix ? `${prefix}.${String(key.value)}` : String(key.value);
      out.set(name, lines.linePos(key.range[0]));
      visit(pair.value as Node | null, name);
    }
  };
  visit(doc.contents as Node | null, '');
  return out;
}

// JSON.parse gives strict syntax but silently keeps the last duplicate key; JSON is valid YAML,
// so the YAML parser with uniqueKeys is used only to detect duplicates.
function parseStrictJson(text: string): Parsed {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    // Some V8 messages quote the source, which may hold a literal secret: keep only the position.
    const m = /^(.*?) in JSON at position (\d+)/.exec((err as Error).message);
    const before = m ? text.slice(0, Number(m[2])).split('\n') : [];
    const at = m
      ? `${m[1]} at line ${before.length}, column ${(before.at(-1)?.length ?? 0) + 1}`
      : 'syntax error';
    return { error: `invalid JSON: ${at}` };
  }
  const dup = parseDocument(text, { uniqueKeys: true }).errors.find((e) => e.code === 'DUPLICATE_KEY');
  if (dup) return { error: `invalid JSON: ${describeYamlError(dup)}` };
  return { value };
}

// Only the position is kept: the parser's excerpt of the source could show a literal secret.
function describeYamlError(e: YAMLError): string {
  const at = e.linePos ? ` at line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '';
  return e.code === 'DUPLICATE_KEY' ? `duplicate key${at}` : `${e.message.split(' at line ')[0]}${at}`;
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
