// The operator's stored admin sign-ins (docs/cli.md): one JSON file, one entry per issuer (public
// origin + realm), written 0600 in a 0700 directory. Every change is read-modify-write under a
// lock file, because the refresh token rotates and two processes refreshing with the same one
// would trip reuse detection and end the sign-in (decision D4).
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CliError } from './cli-error.ts';
import { cliIo } from './cli-io.ts';

export interface StoredCredential {
  /** `{public_origin}/realms/{realm}`; the entry's key. */
  issuer: string;
  realm: string;
  /** Base URL this CLI reaches the server at (may differ from the public origin behind a proxy). */
  server: string;
  /** The admin audience the tokens are for (`{public_origin}/api/v1/realms/{realm}`). */
  audience: string;
  /** Where API paths are resolved: `{server}/api/v1/realms/{realm}`. */
  apiBase: string;
  /** `email` is what the operator typed, or the server's masked hint. */
  user: { id: string; name: string | null; email: string | null };
  accessToken: string;
  expiresAt: Date;
  refreshToken: string | null;
  updatedAt: Date;
}

export type CredentialStore = Map<string, StoredCredential>;

export const CREDENTIALS_ENV = 'PROUDAUTH_CREDENTIALS';

/** --credentials, then PROUDAUTH_CREDENTIALS, then the XDG config directory. */
export function credentialsPath(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  if (flag) return resolve(cliIo().cwd, flag);
  const fromEnv = env[CREDENTIALS_ENV];
  if (fromEnv) return resolve(cliIo().cwd, fromEnv);
  // The XDG base directory rules ignore a relative XDG_CONFIG_HOME.
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.config');
  return join(base, 'proudauth', 'credentials.json');
}

const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

function decodeEntry(v: unknown): StoredCredential | null {
  if (typeof v !== 'object' || v === null) return null;
  const e = v as Record<string, unknown>;
  const user = e.user as Record<string, unknown> | undefined;
  const expiresAt = new Date(String(e.expires_at));
  if (
    !str(e.issuer) ||
    !str(e.realm) ||
    !str(e.server) ||
    !str(e.audience) ||
    !str(e.api_base) ||
    !str(e.access_token) ||
    !(e.refresh_token === null || str(e.refresh_token)) ||
    Number.isNaN(expiresAt.getTime()) ||
    typeof user !== 'object' ||
    user === null ||
    !str(user.id)
  ) {
    return null;
  }
  return {
    issuer: e.issuer,
    realm: e.realm,
    server: e.server,
    audience: e.audience,
    apiBase: e.api_base,
    user: {
      id: user.id,
      name: typeof user.name === 'string' ? user.name : null,
      email: typeof user.email === 'string' ? user.email : null,
    },
    accessToken: e.access_token,
    expiresAt,
    refreshToken: e.refresh_token,
    updatedAt: new Date(String(e.updated_at)),
  };
}

const presentEntry = (c: StoredCredential) => ({
  issuer: c.issuer,
  realm: c.realm,
  server: c.server,
  audience: c.audience,
  api_base: c.apiBase,
  user: c.user,
  access_token: c.accessToken,
  expires_at: c.expiresAt.toISOString(),
  refresh_token: c.refreshToken,
  updated_at: c.updatedAt.toISOString(),
});

/** The stored entries; an absent file is an empty store, a damaged one an error naming the file. */
export function readStore(path: string): CredentialStore {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
    throw new CliError(`cannot read ${path}: ${(e as Error).message}`);
  }
  if ((statSync(path).mode & 0o077) !== 0) {
    cliIo().stderr.write(`identity-cli: warning: ${path} is readable by others; run chmod 600 on it\n`);
  }
  const damaged = () => new CliError(`${path} is not a credentials file; delete it and log in again`);
  let doc: unknown;
  try {
    // A file this program wrote, not a request body: JSON.parse is fine here.
    doc = JSON.parse(text);
  } catch {
    throw damaged();
  }
  const entries = (doc as { credentials?: unknown } | null)?.credentials;
  if (typeof entries !== 'object' || entries === null) throw damaged();
  const store: CredentialStore = new Map();
  for (const raw of Object.values(entries)) {
    const entry = decodeEntry(raw);
    if (!entry) throw damaged();
    store.set(entry.issuer, entry);
  }
  return store;
}

/** Replaces the file atomically (a reader never sees half of it); deletes it once empty. */
export function writeStore(path: string, store: CredentialStore): void {
  if (store.size === 0) {
    rmSync(path, { force: true });
    return;
  }
  // mode applies to the directories mkdir creates; an existing directory keeps its own.
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const doc = {
    version: 1,
    credentials: Object.fromEntries([...store].map(([k, c]) => [k, presentEntry(c)])),
  };
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    fchmodSync(fd, 0o600); // whatever the umask
    writeFileSync(fd, `${JSON.stringify(doc, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  try {
    renameSync(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

// Token requests time out well before this, so a lock older than it was left by a killed process.
const STALE_LOCK_MS = 60_000;
const LOCK_WAIT_MS = 20_000;

/** Runs `fn` holding `<file>.lock`, so read-modify-write cycles of concurrent commands serialize. */
export async function withStoreLock<T>(path: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${path}.lock`;
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx', 0o600));
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { force: true });
    } catch {
      // released meanwhile
    }
    if (Date.now() > deadline) {
      throw new CliError(`${lock} is held by another identity-cli; delete it if none is running`);
    }
    await sleep(50);
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { force: true });
  }
}

const trimSlash = (s: string): string => s.replace(/\/+$/, '');

/**
 * The entry a command means: the only one, or the only one matching --realm and --server (which
 * may name either the public origin or the URL the CLI logged in through).
 */
export function selectCredential(
  store: CredentialStore,
  want: { realm?: string | undefined; server?: string | undefined },
): StoredCredential {
  const server = want.server ? trimSlash(want.server) : undefined;
  const matches = [...store.values()].filter(
    (c) =>
      (!want.realm || c.realm === want.realm) &&
      (!server || c.server === server || c.issuer === `${server}/realms/${c.realm}`),
  );
  const only = matches[0];
  if (matches.length === 1 && only) return only;
  const realmFlag = want.realm ? ` --realm ${want.realm}` : ' --realm NAME';
  if (matches.length === 0) {
    throw new CliError(
      `not logged in${want.realm ? ` to realm ${want.realm}` : ''}: run identity-cli login${realmFlag}`,
    );
  }
  const names = matches.map((c) => c.issuer).join(', ');
  throw new CliError(`several stored sign-ins match (${names}): choose one with --realm and --server`);
}
