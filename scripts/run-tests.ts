// The test command (docs/testing.md). It lists the test files (Node 20's test runner neither globs
// nor finds .ts files), compiles src/ and test/ to plain JavaScript once, migrates one template
// database every file clones, then runs the files in processes of their own, longest first, as
// many at a time as the machine has cores (plus one: files wait on the database and sockets).
// PROUDAUTH_TEST_DATABASE_URL=postgres://... runs against PostgreSQL; otherwise embedded PGlite.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { compileTree, outputOf } from './test-runner/compile.ts';
import { ensureKeyPool } from './test-runner/key-pool.ts';
import { type Counts, emptyCounts, type FileResult, runPool } from './test-runner/pool.ts';
import { prepareTemplate } from './test-runner/template-db.ts';
import { longestFirst, readTimings, writeTimings } from './test-runner/timings.ts';

const root = join(import.meta.dirname, '..');
// Source maps point stack traces at the .ts lines. --liftoff-only keeps V8 from recompiling the
// embedded database's WebAssembly with its optimizing compiler: a test process lives seconds, too
// short to earn that compile back (it cut a PGlite file's CPU time by a fifth to a quarter).
const TEST_PROCESS_FLAGS = ['--enable-source-maps', '--liftoff-only'];
const tmp = join(root, '.test-tmp');
const TIMINGS = join(tmp, 'timings.json');

function findTests(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === 'node_modules' ? [] : findTests(p);
    return name.endsWith('.test.ts') ? [relative(root, p)] : [];
  });
}

/** The workspaces under packages/ (npm workspaces of package.json): their own tests sit in test/. */
const packageTests = (): string[] =>
  readdirSync(join(root, 'packages'), { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => {
      const dir = join(root, 'packages', e.name, 'test');
      return statSync(dir, { throwIfNoEntry: false })?.isDirectory() ? findTests(dir) : [];
    });

const filters = process.argv.slice(2);
const files = [...findTests(join(root, 'src')), ...findTests(join(root, 'test')), ...packageTests()].filter(
  (f) => filters.length === 0 || filters.some((x) => f.includes(x)),
);
if (files.length === 0) {
  process.stderr.write('no test files matched\n');
  process.exit(1);
}

const concurrencySetting = process.env.PROUDAUTH_TEST_CONCURRENCY;
const concurrency = concurrencySetting ? Number(concurrencySetting) : availableParallelism() + 1;
if (!Number.isInteger(concurrency) || concurrency < 1) {
  process.stderr.write(`PROUDAUTH_TEST_CONCURRENCY must be a positive integer, not ${concurrencySetting}\n`);
  process.exit(1);
}

const runStarted = performance.now();
const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

// Tests of the built-in login UI load its built files (dist/ui): build them first, as `npm run
// build` and `npm start` do.
if (files.some((f) => f.includes('browser') || f.includes('builtin-ui'))) {
  const built = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'scripts', 'build-ui.ts')], {
    cwd: root,
    stdio: 'inherit',
  });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

// The verifier examples (examples/verifier-*.mjs) import the built package, as its users do.
if (files.some((f) => f.includes('verifier'))) {
  const built = spawnSync('npm', ['run', '--silent', 'build', '-w', '@proudauth/verifier'], {
    cwd: root,
    stdio: 'inherit',
  });
  if (built.status !== 0) process.exit(built.status ?? 1);
}

// ui/lib: the tests of the login UI's messages import them; packages/: the workspaces' sources and tests.
const compiled = await compileTree(root, ['src', 'test', 'ui/lib', 'packages'], join(tmp, 'build'));
process.stdout.write(
  `# compiled ${compiled.compiled} of ${compiled.total} files in ${seconds(compiled.ms)} (.test-tmp/build)\n`,
);

const keyPool = join(tmp, 'fixtures', 'rs256-keys.json');
const pooled = await ensureKeyPool(keyPool);
if (pooled.generated > 0)
  process.stdout.write(`# generated ${pooled.generated} RS256 test keys (.test-tmp/fixtures)\n`);

const runId = `pa_test_${process.pid}_${randomBytes(3).toString('hex')}`;
const template = await prepareTemplate(process.env.PROUDAUTH_TEST_DATABASE_URL || null, runId, tmp);
process.stdout.write(`# database: ${template.describe}\n`);

const order = longestFirst(root, files, readTimings(TIMINGS, template.kind));
process.stdout.write(`# ${order.length} test files, ${concurrency} at a time\n`);

const pool = runPool(order, {
  concurrency,
  cwd: root,
  env: {
    ...process.env,
    ...template.env,
    PROUDAUTH_TEST_FILE_PROCESS: '1',
    PROUDAUTH_TEST_KEY_POOL: keyPool,
    PROUDAUTH_TEST_BUILD_DIR: compiled.outDir,
    // Node.js 22 and later keep compiled bytecode here between the test processes (and the CLI
    // children they start), so each process skips compiling the same modules; Node.js 20 ignores it.
    NODE_COMPILE_CACHE: join(tmp, 'compile-cache'),
  },
  argsFor: (file) => [...TEST_PROCESS_FLAGS, '--test-reporter=spec', outputOf(compiled.outDir, file)],
  onDone(r, output) {
    const failed = r.code !== 0 || r.counts.fail > 0;
    process.stdout.write(
      `\n# ${failed ? 'FAILED' : 'ok'} ${r.file} (${seconds(r.ms)})\n${output.trimEnd()}\n`,
    );
  },
});
let interrupted = false;
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => {
    interrupted = true;
    pool.stop();
  });
const results = await pool.done;
await template.cleanup();

if (!interrupted)
  writeTimings(TIMINGS, template.kind, Object.fromEntries(results.map((r) => [r.file, Math.round(r.ms)])));
process.stdout.write(summary(results));
const failedFiles = results.filter((r) => r.code !== 0 || r.counts.fail > 0);
process.exit(interrupted || failedFiles.length > 0 || results.length < order.length ? 1 : 0);

function cpuOf(r: FileResult): string {
  return r.cpuMs === null ? '-' : seconds(r.cpuMs);
}

/** CPU time of the test processes (not the database server's), and the files that spend most. */
function cpuLines(rs: FileResult[]): string[] {
  const known = rs.filter((r) => r.cpuMs !== null);
  if (known.length === 0) return [];
  const total = known.reduce((s, r) => s + (r.cpuMs ?? 0), 0);
  return [
    `# CPU of the test processes: ${seconds(total)}`,
    '# most CPU:',
    ...[...known]
      .sort((a, b) => (b.cpuMs ?? 0) - (a.cpuMs ?? 0))
      .slice(0, 10)
      .map((r) => `#   ${cpuOf(r).padStart(8)}  ${r.file}`),
  ];
}

function summary(rs: FileResult[]): string {
  const total: Counts = emptyCounts();
  for (const r of rs) for (const k of Object.keys(total) as (keyof Counts)[]) total[k] += r.counts[k];
  const lines = [
    '',
    `# files ${rs.length} of ${order.length}, ${concurrency} at a time, in ${seconds(performance.now() - runStarted)}`,
    ...Object.entries(total).map(([k, v]) => `# ${k} ${v}`),
    ...cpuLines(rs),
    '# slowest files (wall clock, CPU):',
    ...[...rs]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 10)
      .map((r) => `#   ${seconds(r.ms).padStart(8)} ${cpuOf(r).padStart(8)}  ${r.file}`),
  ];
  const failed = rs.filter((r) => r.code !== 0 || r.counts.fail > 0);
  if (failed.length > 0)
    lines.push(
      '# failed files:',
      ...failed.map((r) => `#   ${r.file} (exit ${r.signal ?? r.code}, ${r.counts.fail} failing)`),
    );
  return `${lines.join('\n')}\n`;
}
