// PostgreSQL's CPU per request as instruction counts, which the machine's load does not move:
// replays the statements bench/sql-cost.ts recorded for one request of each path in a single-user
// backend (`postgres --single`) under valgrind's callgrind, once with K executions and once with
// none, and prints (Ir(K) - Ir(0)) / K per path. Named statements and generic plans as the server
// uses them: PREPARE once, then EXECUTE, with plan_cache_mode=force_generic_plan.
//
// usage: SQL_COST_KEEP=1 SQL_COST_STATE=S SQL_COST_RECORD=R node --import tsx bench/sql-cost.ts
//        node --import tsx bench/sql-instructions.ts S R [K]   (stops the kept cluster while it runs)
import { spawnSync } from 'node:child_process';
import { chownSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
const asPostgres = (cmd: string[]): string[] => (asRoot ? ['runuser', '-u', 'postgres', '--', ...cmd] : cmd);

// As node-pg sends them: dates in ISO form, arrays as array literals, objects as JSON.
function text(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  if (v instanceof Date) return v.toISOString();
  if (Array.isArray(v))
    return `{${v
      .map((x) => {
        const t = text(x);
        return t === null ? 'NULL' : `"${t.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`;
      })
      .join(',')}}`;
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
const literal = (v: unknown): string => {
  const t = text(v);
  return t === null ? 'null' : `'${t.replaceAll("'", "''")}'`;
};

function script(statements: { text: string; values: unknown[] }[], times: number): string {
  const lines = ['set plan_cache_mode = force_generic_plan;\n\n', 'set jit = off;\n\n'];
  statements.forEach((s, i) => {
    if (s.values.length === 0) return; // begin/commit and friends: the same in every build
    lines.push(`prepare s${i} as ${s.text};\n\n`);
  });
  for (let n = 0; n < times; n++)
    statements.forEach((s, i) => {
      if (s.values.length === 0) return;
      lines.push(`execute s${i}(${s.values.map(literal).join(', ')});\n\n`);
    });
  return lines.join('');
}

function instructions(dataDir: string, database: string, input: string): number {
  const dir = mkdtempSync(join(tmpdir(), 'sql-instr-'));
  if (asRoot) spawnSync('chown', ['postgres', dir]);
  const out = join(dir, 'callgrind.out');
  const inFile = join(dir, 'in.sql');
  writeFileSync(inFile, input);
  if (asRoot) chownSync(inFile, 0, 0);
  const cmd = asPostgres([
    'valgrind',
    '--tool=callgrind',
    `--callgrind-out-file=${out}`,
    join(PG_BIN, 'postgres'),
    '--single',
    '-j',
    '-D',
    dataDir,
    '-c',
    'shared_preload_libraries=',
    '-c',
    'session_preload_libraries=',
    database,
  ]);
  const r = spawnSync(cmd[0] as string, cmd.slice(1), {
    input: readFileSync(inFile),
    encoding: 'utf8',
    maxBuffer: 256 * 1024 * 1024,
  });
  const text = readdirSync(dir).includes('callgrind.out') ? readFileSync(out, 'utf8') : '';
  // CALLGRIND_KEEP=DIR keeps the profiles for callgrind_annotate.
  if (process.env.CALLGRIND_KEEP)
    writeFileSync(join(process.env.CALLGRIND_KEEP, `callgrind.${Date.now()}.out`), text);
  rmSync(dir, { recursive: true, force: true });
  const m = /^(?:summary|totals): (\d+)/m.exec(text);
  if (!m || /ERROR/.test(r.stdout))
    throw new Error(`callgrind failed: ${r.stderr.slice(-1500)}\n${r.stdout.slice(-1500)}`);
  return Number(m[1]);
}

function main(): void {
  const [stateFile, recordFile, k] = process.argv.slice(2);
  if (!stateFile || !recordFile) throw new Error('usage: sql-instructions.ts STATE RECORD [K]');
  const K = Number(k ?? 50);
  const state = JSON.parse(readFileSync(stateFile, 'utf8')) as { runDir: string };
  const { database, recorded } = JSON.parse(readFileSync(recordFile, 'utf8')) as {
    database: string;
    recorded: Record<string, { text: string; values: unknown[] }[]>;
  };
  const dataDir = join(state.runDir, 'pgdata');
  const opts = readFileSync(join(dataDir, 'postmaster.opts'), 'utf8');
  const stop = asPostgres([join(PG_BIN, 'pg_ctl'), '-D', dataDir, '-m', 'fast', '-w', 'stop']);
  spawnSync(stop[0] as string, stop.slice(1), { stdio: 'inherit' });
  try {
    for (const [key, statements] of Object.entries(recorded)) {
      if (process.env.PATHS && !process.env.PATHS.split(',').includes(key)) continue;
      // SQL_INSTR_WARM=1: the base run executes once too, so the figure leaves out the one-time
      // planning of the generic plan and the first execution's cache misses (a pooled connection
      // pays those once per statement, not per request).
      const warm = process.env.SQL_INSTR_WARM === '1' ? 1 : 0;
      const base = instructions(dataDir, database, script(statements, warm));
      const loaded = instructions(dataDir, database, script(statements, K + warm));
      const sent = statements.filter((s) => s.values.length > 0).length;
      process.stdout.write(
        `${key}: ${sent} parameterized statement(s) per request, ${Math.round((loaded - base) / K).toLocaleString('en')} instructions per request in PostgreSQL (callgrind, ${K} executions${warm ? ', after a first one' : ''})\n`,
      );
    }
  } finally {
    // Restarted with the options it had (postmaster.opts holds its command line).
    const args = [...opts.matchAll(/"([^"]*)"/g)].map((m) => m[1] as string);
    const o = args
      .filter((a, i) => a !== '-D' && args[i - 1] !== '-D')
      .map((a) => (a.startsWith('-') ? a : `'${a}'`));
    const start = asPostgres([
      join(PG_BIN, 'pg_ctl'),
      '-D',
      dataDir,
      '-l',
      join(state.runDir, 'postgres.log'),
      '-o',
      o.join(' '),
      '-w',
      'start',
    ]);
    spawnSync(start[0] as string, start.slice(1), { stdio: 'inherit' });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) main();
