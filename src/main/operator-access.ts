// How identity-cli reaches a `proudauth dev` that holds the embedded database (docs/cli.md,
// "Commands that open the database"): the process writes <data_dir>/operator-access.json (mode
// 0600, removed at exit) with its pid, the URL of its internal listener and a random token, and
// serves the operator operations there, to loopback callers that present the token. Reading the
// file takes what opening the database takes (access to the data directory), so the token opens
// no door that was not open; the internal listener stays the only place it is accepted.
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface OperatorAccess {
  pid: number;
  url: string;
  token: string;
}

export const accessFile = (dataDir: string): string => join(dataDir, 'operator-access.json');

/** The internal listener's URL as a local client dials it (an any-address bind is dialled on loopback). */
export function dialable(url: string): string {
  return url.replace('//0.0.0.0:', '//127.0.0.1:').replace('//[::]:', '//[::1]:');
}

/** A new token for this process; the routes take it before the listener knows its URL. */
export const newOperatorToken = (): string => randomBytes(32).toString('base64url');

/** Writes the file for this process and removes it when the process exits. */
export function publishOperatorAccess(dataDir: string, internalUrl: string, token: string): OperatorAccess {
  const access = { pid: process.pid, url: dialable(internalUrl), token };
  const file = accessFile(dataDir);
  writeFileSync(file, `${JSON.stringify(access)}\n`, { mode: 0o600 });
  process.once('exit', () => rmSync(file, { force: true }));
  return access;
}

/** The access of the process holding the data directory, or null when none was published. */
export function readOperatorAccess(dataDir: string): OperatorAccess | null {
  try {
    const v = JSON.parse(readFileSync(accessFile(dataDir), 'utf8')) as Partial<OperatorAccess>;
    return typeof v.pid === 'number' && typeof v.url === 'string' && typeof v.token === 'string'
      ? { pid: v.pid, url: v.url, token: v.token }
      : null;
  } catch {
    return null;
  }
}
