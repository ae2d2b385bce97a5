// Shared pieces of the benchmark scripts: the bench configuration, the seeded realm's names,
// loopback-only URL checks, free ports and /proc CPU accounting (ported from the kit's lt.mjs).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../src/platform/config/load.ts';
import type { Config } from '../src/platform/config/settings.ts';

export const BENCH_DIR = dirname(fileURLToPath(import.meta.url));
export const REPO_DIR = join(BENCH_DIR, '..');
export const WORK_DIR = join(BENCH_DIR, '.work');

/** The seeded realm and the sign-in the login scenario repeats for every seeded user. */
export const REALM = 'bench';
export const USERS = 10_000;
export const CLIENTS = 1_000;
export const LOGIN_CLIENT_ID = 'app-0500';
export const LOGIN_REDIRECT = 'https://app-0500.bench.example/callback';
export const PASSWORD = 'bench-password-0123456789';
export const emailOf = (i: number): string => `user${String(i).padStart(5, '0')}@bench.example`;

// ---- the token service scenarios ----------------------------------------------------------------

/** A second realm, like `bench` but with an ES256 signing key (a realm has one key algorithm). */
export const REALM_ES = 'bench-es';
/** Registered resources per realm (api-00 .. api-49). */
export const RESOURCES = 50;
export const audienceOf = (i: number): string => `https://api-${String(i).padStart(2, '0')}.bench.example`;
/** client_credentials target: JWT, 300 s, scopes orders:read and orders:write (as the peer's resources). */
export const CC_AUDIENCE = audienceOf(0);
/** Introspected tokens' audience: JWT, 3600 s, so tokens minted before the runs outlive them. */
export const INTROSPECT_AUDIENCE = audienceOf(1);
export const CC_SCOPE = 'orders:read';
/** The first CC_CALLERS service clients of each realm take turns at the token endpoint. */
export const CC_CALLERS = 100;
/** The resource server of api-NN is client rs-NN, registered as its introspector. */
export const resourceServerOf = (i: number): string => `rs-${String(i).padStart(2, '0')}`;
export const INTROSPECTOR_CLIENT_ID = resourceServerOf(1);
/** One fixed PKCE pair for every sign-in (a fresh one per flow would cost the server nothing more). */
export const PKCE_VERIFIER = 'bench-pkce-verifier-0123456789-abcdefghijklmnopqrstuvwxyz';
export const PKCE_CHALLENGE = createHash('sha256').update(PKCE_VERIFIER, 'ascii').digest('base64url');

export interface ClientCredentials {
  clientId: string;
  secret: string;
}

/** Client secrets the seed issued for the load generator (written to the run directory, mode 600). */
export interface BenchCredentials {
  /** Service clients of realm `bench` (RS256) and `bench-es` (ES256) for client_credentials. */
  ccRs256: ClientCredentials[];
  ccEs256: ClientCredentials[];
  /** rs-01 in realm `bench`, introspector of INTROSPECT_AUDIENCE. */
  introspector: ClientCredentials;
  /** app-0500 in realm `bench`, the code flow's confidential client. */
  login: ClientCredentials;
}

/** The peer's one client and its resource servers (bench/peer-server.mjs). */
export const PEER_CLIENT: ClientCredentials = {
  clientId: 'bench',
  secret: 'bench-secret-0123456789abcdef0123456789abcdef',
};
export const PEER_RESOURCES = {
  RS256: 'https://api.example.test/jwt-rs256',
  ES256: 'https://api.example.test/jwt-es256',
  opaque: 'https://api.example.test/opaque',
} as const;

/** RFC 6749 section 2.3.1: form-encoded id and secret, then Basic. */
export const basicAuth = (c: ClientCredentials): string =>
  `Basic ${Buffer.from(`${encodeURIComponent(c.clientId)}:${encodeURIComponent(c.secret)}`).toString('base64')}`;

/**
 * The configuration both the seeder and the server use: table defaults (Argon2id 64 MiB, t=2,
 * p=1, at most 4 hashes at once, 250 ms padding), no environment, PostgreSQL, a root key file.
 */
export function benchConfig(o: { databaseUrl: string; rootKeyFile: string; port?: number }): Config {
  return loadConfig({ file: null, env: {}, overrides: benchOverrides(o) });
}

/** The settings benchConfig sets; bench/server.mjs gets them as JSON and loads them the same way. */
export function benchOverrides(o: {
  databaseUrl: string;
  rootKeyFile: string;
  port?: number;
}): Record<string, string | number> {
  const port = o.port ?? 0;
  return {
    'database.url': o.databaseUrl,
    'keys.root.1': `file:${o.rootKeyFile}`,
    'keys.active_version': 1,
    'server.listen': `127.0.0.1:${port}`,
    'server.internal_listen': '127.0.0.1:0',
    'server.public_origin': `http://127.0.0.1:${port === 0 ? 8080 : port}`,
    'server.drain_delay': '0s',
    // Every load-generator connection comes from 127.0.0.1, which stands for many real clients:
    // keep the per-network sign-in budget spent (its cost is measured) but out of reach.
    'security.budgets.network_attempts': 1_000_000,
  };
}

/** Every address a bench script talks to is loopback. */
export function assertLoopback(url: string): void {
  if (!/^(https?|postgres(ql)?):\/\/([^@/]*@)?(127\.0\.0\.1|localhost|\[::1\])[:/]/.test(url)) {
    throw new Error(`loopback only: ${url}`);
  }
}

/** A port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

// ---- /proc accounting --------------------------------------------------------------------------

export const HZ = 100; // getconf CLK_TCK on Linux
export const NCPU = cpus().length;

/** utime + stime + cutime + cstime of a process (all its threads), in clock ticks. */
export function procTicks(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  } catch {
    return 0;
  }
}

/** utime + stime of one thread (the main thread of a process is the task whose id is its pid). */
export function threadTicks(pid: number, tid = pid): number {
  try {
    const s = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return 0;
  }
}

/** utime and stime (clock ticks) of every thread of a process, by thread id. */
export function threadsOf(pid: number): Map<number, { user: number; sys: number }> {
  const out = new Map<number, { user: number; sys: number }>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tids) {
    try {
      const s = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
      out.set(Number(t), { user: Number(f[11]), sys: Number(f[12]) });
    } catch {
      // thread ended
    }
  }
  return out;
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** A process and all its descendants. */
export function processTree(pids: number[]): number[] {
  const out = new Set<number>();
  const stack = [...pids];
  while (stack.length) {
    const p = stack.pop() as number;
    if (out.has(p)) continue;
    out.add(p);
    stack.push(...childrenOf(p));
  }
  return [...out];
}

export const treeTicks = (pids: number[]): number =>
  processTree(pids)
    .map(procTicks)
    .reduce((a, b) => a + b, 0);

/** Busy and total jiffies of the whole machine. */
export function machineTicks(): { busy: number; total: number } {
  const l = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '')
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const v = (i: number) => l[i] ?? 0;
  const idle = v(3) + v(4);
  const total = [0, 1, 2, 3, 4, 5, 6, 7].reduce((a, i) => a + v(i), 0);
  return { busy: total - idle, total };
}

/** VmRSS and VmHWM of a process in MiB (null when it is gone). */
export function rssMiB(pid: number): { rss: number; hwm: number } | null {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? 0);
    return { rss: kib('VmRSS') / 1024, hwm: kib('VmHWM') / 1024 };
  } catch {
    return null;
  }
}

/** Sum of RSS over a process tree (PostgreSQL: postmaster and backends), MiB; shared pages count once per process. */
export const treeRssMiB = (pid: number): number =>
  processTree([pid])
    .map((p) => rssMiB(p)?.rss ?? 0)
    .reduce((a, b) => a + b, 0);

/** Waits until the machine is quiet (busy < 0.25 cores over 2 s), at most `tries` windows. */
export async function waitQuiet(
  tries: number,
): Promise<{ quiet: boolean; busyCores: number; waitedS: number }> {
  const t0 = Date.now();
  let busyCores = 0;
  for (let i = 0; i < tries; i++) {
    const a = machineTicks();
    await sleep(2000);
    const b = machineTicks();
    busyCores = ((b.busy - a.busy) / Math.max(1, b.total - a.total)) * NCPU;
    if (busyCores < 0.25) return { quiet: true, busyCores, waitedS: (Date.now() - t0) / 1000 };
    await sleep(1000);
  }
  return { quiet: false, busyCores, waitedS: (Date.now() - t0) / 1000 };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i] as number;
}
