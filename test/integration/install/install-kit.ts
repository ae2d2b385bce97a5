// The production install path as docs/deployment.md describes it, for tests: `npm pack` of this
// checkout (built first when dist/ is missing), deploy/install.sh into an empty folder, and the
// installed `proudauth` and `identity-cli` run as child processes with a configuration file.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { type RunResult, runToEnd } from '../../harness/run-to-end.ts';

export const ROOT = join(import.meta.dirname, '..', '..', '..');

export type Exec = RunResult;

/**
 * The environment of a process an operator starts: nothing of the test run's npm (npm_* variables
 * would point a nested npm at this checkout) and no PROUDAUTH_* setting; node of this run first.
 */
export function operatorEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (/^npm_/i.test(k) || k === 'INIT_CWD' || k.startsWith('PROUDAUTH_') || k === 'NODE_OPTIONS') continue;
    env[k] = v;
  }
  env.PATH = `${dirname(process.execPath)}:${process.env.PATH ?? ''}`;
  return { ...env, ...extra };
}

/** Runs a command to its end; rejects when it outlasts the limit. */
export function exec(
  command: string,
  args: readonly string[],
  opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number },
): Promise<Exec> {
  return runToEnd(command, args, {
    cwd: opts.cwd,
    env: opts.env ?? operatorEnv(),
    timeoutMs: opts.timeoutMs ?? 120_000,
  });
}

const ok = (r: Exec, what: string): Exec => {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code ?? r.signal})\n${r.stdout}\n${r.stderr}`);
  return r;
};

/** The newest modification time of the files under `dir`, in milliseconds (0 when it is missing). */
function newestUnder(dir: string): number {
  if (!existsSync(dir)) return 0;
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((newest, e) => Math.max(newest, statSync(join(e.parentPath, e.name)).mtimeMs), 0);
}

/**
 * `npm run build` unless dist/ holds the server and the login UI, built after the last change to
 * src/ and ui/: a dist/ left from an older checkout would pack yesterday's program. (The compiler
 * builds incrementally and leaves unchanged output alone; the UI build writes every file, so the
 * newest file of dist/ tells when the last build ran.)
 */
export async function ensureBuilt(): Promise<'reused' | 'built'> {
  if (
    existsSync(join(ROOT, 'dist', 'main', 'proudauth.js')) &&
    existsSync(join(ROOT, 'dist', 'ui', 'vendor')) &&
    newestUnder(join(ROOT, 'dist')) >= Math.max(newestUnder(join(ROOT, 'src')), newestUnder(join(ROOT, 'ui')))
  )
    return 'reused';
  ok(await exec('npm', ['run', 'build'], { cwd: ROOT, timeoutMs: 300_000 }), 'npm run build');
  return 'built';
}

/** `npm pack` of the checkout into `dir`; the tarball's path. */
export async function pack(dir: string): Promise<string> {
  ok(
    await exec('npm', ['pack', '--silent', '--pack-destination', dir], { cwd: ROOT, timeoutMs: 120_000 }),
    'npm pack',
  );
  const tgz = readdirSync(dir).find((f) => f.endsWith('.tgz'));
  if (!tgz) throw new Error(`npm pack left no tarball in ${dir}`);
  return join(dir, tgz);
}

/** deploy/install.sh PREFIX TARBALL, from the npm cache when it has everything. */
export async function install(prefix: string, tarball: string): Promise<Exec> {
  return ok(
    await exec('sh', [join(ROOT, 'deploy', 'install.sh'), prefix, tarball, '--prefer-offline'], {
      cwd: dirname(tarball),
      timeoutMs: 300_000,
    }),
    'deploy/install.sh',
  );
}

/** An installed program, as the systemd units start it. */
export const installedBin = (prefix: string, program: 'proudauth' | 'identity-cli') =>
  join(prefix, 'node_modules', '.bin', program);

/** A long-running installed process whose output the test reads. */
export class Installed {
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;

  constructor(bin: string, args: readonly string[], cwd: string) {
    this.child = spawn(bin, args, { cwd, env: operatorEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.setEncoding('utf8').on('data', (s: string) => {
      this.stdout += s;
    });
    this.child.stderr?.setEncoding('utf8').on('data', (s: string) => {
      this.stderr += s;
    });
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code, signal) => resolve({ code, signal }));
    });
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** The first match of `pattern` in stdout; rejects when the process exits or the limit passes. */
  async waitFor(pattern: RegExp, limitMs: number): Promise<RegExpMatchArray> {
    const end = Date.now() + limitMs;
    for (;;) {
      const m = this.stdout.match(pattern);
      if (m) return m;
      if (!this.running) throw new Error(`exited before printing ${pattern}\n${this.stdout}\n${this.stderr}`);
      if (Date.now() > end)
        throw new Error(`no ${pattern} within ${limitMs} ms\n${this.stdout}\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }

  kill(): void {
    this.signal('SIGKILL');
  }
}
