// A private PostgreSQL cluster for one test (the restart drill in test/integration/faults): initdb
// into a temporary directory, its own free port on 127.0.0.1 and its own socket directory, run as
// the postgres OS user when the test runs as root (initdb and postgres refuse root), as
// bench/seed.ts does for benchmark runs. Every pg_ctl call is asynchronous, so a test can stop or
// restart the cluster while its own load keeps running in the same event loop.
import { execFile, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const PG_BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** Why a private cluster cannot be started here, or null when it can. */
export function privateClusterUnavailable(): string | null {
  for (const bin of ['initdb', 'pg_ctl'])
    if (!existsSync(join(PG_BIN, bin)))
      return `${join(PG_BIN, bin)} is missing (set PG_BIN to the PostgreSQL binaries)`;
  if (isRoot()) {
    if (spawnSync('runuser', ['--help'], { stdio: 'ignore' }).status !== 0)
      return 'running as root and runuser is missing (initdb refuses root)';
    if (spawnSync('id', ['-u', 'postgres'], { stdio: 'ignore' }).status !== 0)
      return 'running as root and there is no postgres OS user to run the cluster as';
  }
  return null;
}

function command(bin: string, args: string[]): [string, string[]] {
  const full = join(PG_BIN, bin);
  return isRoot() ? ['runuser', ['-u', 'postgres', '--', full, ...args]] : [full, args];
}

/** Runs a PostgreSQL binary without blocking the event loop; rejects with its output on failure. */
function pg(bin: string, args: string[], timeoutMs = 90_000): Promise<string> {
  const [file, argv] = command(bin, args);
  return new Promise((resolve, reject) => {
    execFile(file, argv, { timeout: timeoutMs, encoding: 'utf8' }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${bin} ${args.join(' ')} failed: ${err.message}\n${stdout}${stderr}`));
      else resolve(`${stdout}${stderr}`);
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface PrivateCluster {
  port: number;
  dir: string;
  /** A URL of database `name` (trust authentication, user postgres). */
  url(name: string): string;
  /** pg_ctl restart: stops (terminating every session under `fast`), starts again, waits until it accepts connections. */
  restart(mode?: 'fast' | 'immediate'): Promise<void>;
  stop(mode?: 'fast' | 'immediate'): Promise<void>;
  start(): Promise<void>;
  /** The last lines of the server log, for failure messages. */
  logTail(): string;
  /** Stops the cluster (fast, else immediate) and removes its directory; safe to call twice. */
  destroy(): Promise<void>;
}

export async function startPrivateCluster(): Promise<PrivateCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'proudauth-pg-'));
  const dataDir = join(dir, 'data');
  const sockDir = join(dir, 'sock');
  const logFile = join(dir, 'postgres.log');
  chmodSync(dir, 0o755);
  mkdirSync(sockDir);
  mkdirSync(dataDir, { mode: 0o700 });
  writeFileSync(logFile, '');
  if (isRoot()) {
    const r = spawnSync('chown', ['-R', 'postgres:postgres', dir], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`chown ${dir}: ${r.stderr}`);
  }
  let running = false;
  let destroyed = false;
  const stopNow = () => {
    // Last resort when the test process exits without its clean-up having run.
    if (running) {
      const [file, argv] = command('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']);
      spawnSync(file, argv, { stdio: 'ignore', timeout: 20_000 });
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', stopNow);
  const cluster: PrivateCluster = {
    port: 0,
    dir,
    url: (name) => `postgres://postgres@127.0.0.1:${cluster.port}/${name}`,
    async start() {
      const options = [
        '-c listen_addresses=127.0.0.1',
        `-c port=${cluster.port}`,
        `-c unix_socket_directories=${sockDir}`,
        '-c max_connections=50',
        // A test cluster: durability is not what the drill is about, and the machine is shared.
        '-c fsync=off',
        '-c full_page_writes=off',
      ].join(' ');
      running = true;
      await pg('pg_ctl', ['-D', dataDir, '-l', logFile, '-o', options, '-w', '-t', '60', 'start']);
    },
    async stop(mode = 'fast') {
      await pg('pg_ctl', ['-D', dataDir, '-m', mode, '-w', '-t', '60', 'stop']);
      running = false;
    },
    async restart(mode = 'fast') {
      await pg('pg_ctl', ['-D', dataDir, '-l', logFile, '-m', mode, '-w', '-t', '60', 'restart']);
    },
    logTail: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').slice(-3000) : ''),
    async destroy() {
      if (destroyed) return;
      destroyed = true;
      if (running) {
        try {
          await cluster.stop('fast');
        } catch {
          await cluster.stop('immediate').catch(() => {});
        }
      }
      rmSync(dir, { recursive: true, force: true });
      process.removeListener('exit', stopNow);
    },
  };
  try {
    const settings = '-A trust -U postgres -E UTF8 --locale=C --no-sync'.split(' ');
    await pg('initdb', ['-D', dataDir, ...settings]);
    cluster.port = await freePort();
    await cluster.start();
  } catch (e) {
    const log = cluster.logTail();
    await cluster.destroy();
    throw new Error(`${(e as Error).message}\n${log}`);
  }
  return cluster;
}
