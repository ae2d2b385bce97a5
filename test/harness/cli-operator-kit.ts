// An operator signed in with identity-cli (a real child process) against a harness server: a
// realm with a bootstrapped administrator, a credentials file of its own, and a way to run more
// identity-cli commands as that operator.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { TestContext } from 'node:test';
import { injectedIo } from '../../src/main/cli/cli-io.ts';
import { runIdentityCli } from '../../src/main/cli/identity-cli-main.ts';
import { decodeBase32 } from '../../src/mfa/base32.ts';
import { totpAt, totpStep } from '../../src/mfa/otp.ts';
import { bootstrapAdministrator } from '../../src/setup/bootstrap.service.ts';
import { childEnv, type RunResult, run } from '../integration/cli/cli-process.ts';
import { type Harness, type HarnessOptions, startHarness, uniqueRealmName } from './harness.ts';

const ROOT = join(import.meta.dirname, '..', '..');
export const PASSWORD = 'first-admin-password-1';
export const EMAIL = 'admin@example.com';

// biome-ignore lint/suspicious/noExplicitAny: the stored file is read member by member
export type Stored = Record<string, any>;

export interface Operator {
  h: Harness;
  realm: string;
  /** Environment of every identity-cli run of this operator. */
  env: NodeJS.ProcessEnv;
  /** The credentials file the commands use. */
  file: string;
  issuer: string;
  cli(args: string[], input?: string): Promise<RunResult>;
  entry(): Stored;
  writeEntry(entry: Stored): void;
}

export function tempDir(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'proudauth-api-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/**
 * identity-cli login run in this process, typing the password and a TOTP code for the enrollment
 * once each prompt shows (test/integration/signin-cli/login.test.ts runs login as a child process).
 */
export async function login(env: NodeJS.ProcessEnv, args: string[]): Promise<RunResult> {
  const stdin = new PassThrough();
  const io = injectedIo({ env, cwd: ROOT, stdin });
  let written = 0;
  io.stderr.onWrite = (stderr) => {
    const key = /key: ([A-Z2-7]+)/.exec(stderr)?.[1];
    if (written === 0 && stderr.includes('Password')) {
      written = 1;
      stdin.write(`${PASSWORD}\n`);
    } else if (written === 1 && key) {
      written = 2;
      stdin.write(`${totpAt(decodeBase32(key), totpStep(Date.now()))}\n`);
    }
  };
  try {
    const code = await runIdentityCli(['login', ...args], io);
    return { code, signal: null, stdout: io.stdout.text, stderr: io.stderr.text };
  } finally {
    stdin.end();
  }
}

/**
 * A realm with a bootstrapped administrator who has logged in with identity-cli. The file is
 * found the default way, under XDG_CONFIG_HOME, unless `credentials` names one. `harness` sets up
 * the server (the browser tests serve the login UI on its public origin).
 */
export async function loggedIn(t: TestContext, harness: HarnessOptions = {}): Promise<Operator> {
  const h = await startHarness(t, harness);
  const realm = uniqueRealmName();
  await bootstrapAdministrator(
    { ...h.ctx, keyring: h.ctx.keyring as NonNullable<typeof h.ctx.keyring>, signingAlgorithm: 'RS256' },
    { realm, email: EMAIL, password: PASSWORD },
  );
  const config = tempDir(t);
  const env = childEnv({ XDG_CONFIG_HOME: config, HOME: config });
  const r = await login(env, ['-realm', realm, '-email', EMAIL, '-server', h.publicUrl]);
  assert.equal(r.code, 0, r.stderr);
  const file = join(config, 'proudauth', 'credentials.json');
  const issuer = `${h.ctx.config.server.publicOrigin}/realms/${realm}`;
  const read = (): Stored => JSON.parse(readFileSync(file, 'utf8'));
  return {
    h,
    realm,
    env,
    file,
    issuer,
    cli: (args, input) => run('identity-cli', args, { env, ...(input !== undefined ? { input } : {}) }),
    entry: () => read().credentials[issuer],
    writeEntry(entry) {
      const doc = read();
      doc.credentials[issuer] = entry;
      writeFileSync(file, JSON.stringify(doc), { mode: 0o600 });
    },
  };
}

export const parse = (r: RunResult): Stored => {
  try {
    return JSON.parse(r.stdout);
  } catch {
    throw new Error(`not JSON (exit ${r.code}):\n${r.stdout}\n${r.stderr}`);
  }
};
