// The test command (docs/testing.md). It lists the test files (Node 20's test runner neither globs
// nor finds .ts files), compiles src/ and test/ to plain JavaScript once, migrates one template
// database every file clones, then runs the files in batches, several files one after another in
// one process (test/harness/batch-entry.ts), longest first, as many processes at a time as the
// machine has cores (plus one: files wait on the database and sockets).
// PROUDAUTH_TEST_DATABASE_URL=postgres://... runs against PostgreSQL; otherwise embedded PGlite.
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join, relative } from 'node:path';
import { batchesOf, fileOutcomes } from './test-runner/batches.ts';
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

// PROUDAUTH_TEST_FILES_PER_PROCESS=1 gives every file a process of its own, as before batches.
const maxFilesSetting = process.env.PROUDAUTH_TEST_FILES_PER_PROCESS;
const maxFiles = maxFilesSetting ? Number(maxFilesSetting) : 16;
if (!Number.isInteger(maxFiles) || maxFiles < 1) {
  process.stderr.write(
    `PROUDAUTH_TEST_FILES_PER_PROCESS must be a positive integer, not ${maxFilesSetting}\n`,
  );
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

// ui/lib: the tests of the login UI's messages import them; packages/: the workspaces' sources and tests;
// scripts/test-runner: the runner's own parts, which test/runner tests.
const compiled = await compileTree(
  root,
  ['src', 'test', 'ui/lib', 'packages', 'scripts/test-runner'],
  join(tmp, 'build'),
);
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

const { order, estimate } = longestFirst(root, files, readTimings(TIMINGS, template.kind));
const batches = batchesOf(order, estimate, { root, concurrency, maxFiles });
process.stdout.write(
  `# ${order.length} test files in ${batches.length} processes, ${concurrency} at a time\n`,
);

/** Each file's wall-clock time (its suite's, inside a batch), and the files whose suite failed. */
const fileMs = new Map<string, number>();
const failedInBatches = new Set<string>();
const pool = runPool(batches, {
  concurrency,
  cwd: root,
  env: {
    ...process.env,
    ...template.env,
    PROUDAUTH_TEST_FILE_PROCESS: '1',
    PROUDAUTH_TEST_BATCH: '1',
    PROUDAUTH_TEST_KEY_POOL: keyPool,
    PROUDAUTH_TEST_BUILD_DIR: compiled.outDir,
    // Node.js 22 and later keep compiled bytecode here between the test processes (and the CLI
    // children they start), so each process skips compiling the same modules; Node.js 20 ignores it.
    NODE_COMPILE_CACHE: join(tmp, 'compile-cache'),
  },
  argsFor: (batch) => [
    ...TEST_PROCESS_FLAGS,
    '--test-reporter=spec',
    outputOf(compiled.outDir, 'test/harness/batch-entry.ts'),
    ...batch.map((file) => outputOf(compiled.outDir, file)),
  ],
  onDone(r, output) {
    const outcomes = fileOutcomes(output);
    for (const file of r.files) fileMs.set(file, outcomes.ms.get(file) ?? r.ms / r.files.length);
    for (const file of outcomes.failed) failedInBatches.add(file);
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
  writeTimings(TIMINGS, template.kind, Object.fromEntries([...fileMs].map(([f, ms]) => [f, Math.round(ms)])));
const filesRun = results.reduce((n, r) => n + r.files.length, 0);
process.stdout.write(summary(results));
const failedFiles = results.filter((r) => r.code !== 0 || r.counts.fail > 0);
process.exit(interrupted || failedFiles.length > 0 || filesRun < order.length ? 1 : 0);

function cpuOf(r: FileResult): string {
  return r.cpuMs === null ? '-' : seconds(r.cpuMs);
}

/** CPU time of the test processes (not the database server's), and the batches that spend most. */
function cpuLines(rs: FileResult[]): string[] {
  const known = rs.filter((r) => r.cpuMs !== null);
  if (known.length === 0) return [];
  const total = known.reduce((s, r) => s + (r.cpuMs ?? 0), 0);
  return [
    `# CPU of the test processes: ${seconds(total)}`,
    '# most CPU (per process):',
    ...[...known]
      .sort((a, b) => (b.cpuMs ?? 0) - (a.cpuMs ?? 0))
      .slice(0, 10)
      .map((r) => `#   ${cpuOf(r).padStart(8)}  ${r.file}`),
  ];
}

/** A failed process's failed files by name, or the process itself when no file's suite says it failed. */
function failedNames(r: FileResult): string[] {
  const named = r.files.filter((f) => failedInBatches.has(f));
  const how = `exit ${r.signal ?? r.code}, ${r.counts.fail} failing in the process`;
  return (named.length > 0 ? named : [r.file]).map((f) => `#   ${f} (${how})`);
}

function summary(rs: FileResult[]): string {
  const total: Counts = emptyCounts();
  for (const r of rs) for (const k of Object.keys(total) as (keyof Counts)[]) total[k] += r.counts[k];
  // Each file runs inside a suite of the batch entry's, which is not one of the file's own.
  total.suites = Math.max(0, total.suites - filesRun);
  const lines = [
    '',
    `# files ${filesRun} of ${order.length} in ${rs.length} processes, ${concurrency} at a time, in ${seconds(performance.now() - runStarted)}`,
    ...Object.entries(total).map(([k, v]) => `# ${k} ${v}`),
    ...cpuLines(rs),
    '# slowest files (wall clock):',
    ...[...fileMs]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([f, ms]) => `#   ${seconds(ms).padStart(8)}  ${f}`),
  ];
  const failed = rs.filter((r) => r.code !== 0 || r.counts.fail > 0);
  if (failed.length > 0) lines.push('# failed files:', ...failed.flatMap(failedNames));
  return `${lines.join('\n')}\n`;
}
