// Running `identity-cli` and `proudauth` against a deployment of their own: a temporary data
// directory (embedded database) or, when the run uses PostgreSQL, a scratch database. `run` runs a
// command in this process with injected argv, environment, standard streams and exit code (the same
// code the bin entry points run, src/main/cli/cli-io.ts); `runProcess` and `Background` start a real
// child process, for what only a process shows: the entry point starting, signals, long-running
// commands. Every child has a time limit and is killed if a test ends while it still runs.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { injectedIo } from '../../../src/main/cli/cli-io.ts';
import { runIdentityCli } from '../../../src/main/cli/identity-cli-main.ts';
import { runProudauth } from '../../../src/main/proudauth-main.ts';
import type { Db } from '../../../src/platform/db/db.ts';
import { openPostgres } from '../../../src/platform/db/pg.ts';
import { openPglite } from '../../../src/platform/db/pglite.ts';
import { nodeArgs } from '../../harness/entry-point.ts';
import { type RunResult, runToEnd } from '../../harness/run-to-end.ts';
import { databaseUrlFor, TEST_DATABASE_URL } from '../../harness/test-db.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const ENTRY = {
  'identity-cli': join(ROOT, 'src/main/identity-cli.ts'),
  proudauth: join(ROOT, 'src/main/proudauth.ts'),
} as const;

export type Program = keyof typeof ENTRY;

export type { RunResult };

/** The parent's environment without any PROUDAUTH_ setting, plus the given ones. */
export function childEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('PROUDAUTH_')) env[k] = v;
  return { ...env, ...settings };
}

export interface RunOptions {
  env: NodeJS.ProcessEnv;
  /** Written to stdin, which is then closed; without it stdin is closed at once. */
  input?: string;
  timeoutMs?: number;
}

/**
 * Runs a one-shot command in this process to its end and answers what a child process would have:
 * the exit code and everything written to stdout and stderr. The working directory is the
 * repository's, as for `runProcess`.
 */
export async function run(program: Program, args: string[], opts: RunOptions): Promise<RunResult> {
  const io = injectedIo({
    env: opts.env,
    cwd: ROOT,
    ...(opts.input !== undefined ? { input: opts.input } : {}),
  });
  const running = program === 'identity-cli' ? runIdentityCli(args, io) : runProudauth(args, io);
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    const ms = opts.timeoutMs ?? 60_000;
    timer = setTimeout(
      () =>
        reject(
          new Error(
            `${program} ${args.join(' ')} did not finish in ${ms} ms\n${io.stdout.text}\n${io.stderr.text}`,
          ),
        ),
      ms,
    );
  });
  try {
    const code = await Promise.race([running, limit]);
    if (code === null) throw new Error(`${program} ${args.join(' ')} kept running: use Background`);
    return { code, signal: null, stdout: io.stdout.text, stderr: io.stderr.text };
  } finally {
    clearTimeout(timer);
  }
}

/** Runs the command as a child process started from its entry point, to its end. */
export function runProcess(program: Program, args: string[], opts: RunOptions): Promise<RunResult> {
  return runToEnd(process.execPath, [...nodeArgs(ENTRY[program]), ...args], {
    cwd: ROOT,
    env: opts.env,
    timeoutMs: opts.timeoutMs ?? 60_000,
    ...(opts.input !== undefined ? { input: opts.input } : {}),
  });
}

/** A long-running child (proudauth dev) whose output a test waits on. */
export class Background {
  stdout = '';
  stderr = '';
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly child: ChildProcess;
  private readonly waiters = new Set<() => void>();

  /** `preloads` are .ts files imported before the program (e.g. test/harness/shifted-clock.ts). */
  constructor(program: Program, args: string[], env: NodeJS.ProcessEnv, preloads: string[] = []) {
    this.child = spawn(process.execPath, [...nodeArgs(ENTRY[program], preloads), ...args], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const notify = () => {
      for (const w of this.waiters) w();
    };
    this.child.stdout?.setEncoding('utf8').on('data', (s: string) => {
      this.stdout += s;
      notify();
    });
    this.child.stderr?.setEncoding('utf8').on('data', (s: string) => {
      this.stderr += s;
      notify();
    });
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code, signal) => {
        resolve({ code, signal });
        notify();
      });
    });
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Sends a signal without waiting for anything. */
  signal(signal: NodeJS.Signals): void {
    if (this.running) this.child.kill(signal);
  }

  /** Resolves with the match once stdout (or stderr) matches; rejects on exit or after the time limit. */
  waitFor(
    pattern: RegExp,
    timeoutMs = 60_000,
    stream: 'stdout' | 'stderr' = 'stdout',
  ): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const m = this[stream].match(pattern);
        if (m) return done(() => resolve(m));
        if (!this.running)
          done(() => reject(new Error(`exited before printing ${pattern}\n${this.stdout}\n${this.stderr}`)));
      };
      const timer = setTimeout(
        () =>
          done(() =>
            reject(new Error(`no ${pattern} within ${timeoutMs} ms\n${this.stdout}\n${this.stderr}`)),
          ),
        timeoutMs,
      );
      const done = (settle: () => void) => {
        clearTimeout(timer);
        this.waiters.delete(check);
        settle();
      };
      this.waiters.add(check);
      check();
    });
  }

  /** Sends the signal and waits for the exit, killing the process if it overstays the limit. */
  async stop(signal: NodeJS.Signals = 'SIGTERM', timeoutMs = 30_000) {
    if (this.running) this.child.kill(signal);
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  kill(): void {
    if (this.running) this.child.kill('SIGKILL');
  }
}

export const newRootKey = (): string => randomBytes(32).toString('base64');

export interface Deployment {
  kind: 'postgres' | 'pglite';
  dataDir: string;
  rootKey: string;
  databaseUrl: string | null;
  /** Settings every child process of this deployment gets. */
  settings: Record<string, string>;
  env(extra?: Record<string, string>): NodeJS.ProcessEnv;
  /** Opens the deployment's database in this process (never while a child holds the embedded one). */
  withDb<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  cleanup(): Promise<void>;
}

/** A name the test runner's own clean-up also matches, should this process die before dropping it. */
function scratchDatabaseName(): string {
  const template = process.env.PROUDAUTH_TEST_PG_TEMPLATE;
  const prefix = template ? template.replace(/_tmpl$/, '') : 'pa_test_manual';
  return `${prefix}_cli_${randomBytes(4).toString('hex')}`;
}

async function adminQuery(sql: string): Promise<void> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL! });
  await admin.connect();
  try {
    await admin.query(sql);
  } finally {
    await admin.end();
  }
}

/**
 * A deployment with an empty database: a new data directory, or a new PostgreSQL database when the
 * run uses PostgreSQL. Root key version 1 is configured explicitly so tests know the key.
 */
export async function scratchDeployment(opts: { rootKey?: boolean } = {}): Promise<Deployment> {
  const dataDir = mkdtempSync(join(tmpdir(), 'proudauth-cli-'));
  const rootKey = newRootKey();
  const settings: Record<string, string> = {
    PROUDAUTH_DATA_DIR: dataDir,
    PROUDAUTH_OBSERVABILITY_LOG_LEVEL: 'warn',
  };
  if (opts.rootKey !== false) {
    settings.PROUDAUTH_KEYS_ROOT_1 = rootKey;
    settings.PROUDAUTH_KEYS_ACTIVE_VERSION = '1';
  }
  let databaseUrl: string | null = null;
  let dbName: string | null = null;
  if (TEST_DATABASE_URL) {
    dbName = scratchDatabaseName();
    await adminQuery(`create database "${dbName}"`);
    databaseUrl = databaseUrlFor(TEST_DATABASE_URL, dbName);
    settings.PROUDAUTH_DATABASE_URL = databaseUrl;
  }
  return {
    kind: databaseUrl ? 'postgres' : 'pglite',
    dataDir,
    rootKey,
    databaseUrl,
    settings,
    env: (extra = {}) => childEnv({ ...settings, ...extra }),
    async withDb(fn) {
      const db = databaseUrl
        ? openPostgres({ url: databaseUrl, maxConns: 2, statementTimeoutMs: 30_000 })
        : await openPglite({ dataDir });
      try {
        return await fn(db);
      } finally {
        await db.close();
      }
    },
    async cleanup() {
      if (dbName) await adminQuery(`drop database if exists "${dbName}" with (force)`);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Parses a command's JSON output, failing with the whole output when it is not JSON. */
export function json(r: RunResult): Record<string, unknown> {
  try {
    return JSON.parse(r.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(`not JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
}
