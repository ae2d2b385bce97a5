// identity-cli login as an operator runs it: a child process answering prompts on stdin, then
// exchanging the code and storing the admin token in a credentials file.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { decodeBase32 } from '../../../src/mfa/base32.ts';
import { totpAt, totpStep } from '../../../src/mfa/otp.ts';
import { renderTerminalQr } from '../../../src/mfa/terminal-qr.ts';
import { bootstrapAdministrator } from '../../../src/setup/bootstrap.service.ts';
import { nodeArgs } from '../../harness/entry-point.ts';
import { startHarness, uniqueRealmName } from '../../harness/harness.ts';
import { signinSetup } from '../../harness/signin-kit.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** A credentials file in a directory of its own, removed after the test. */
function credentialsFile(t: TestContext): string {
  const dir = mkdtempSync(join(tmpdir(), 'proudauth-login-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return join(dir, 'credentials.json');
}

/** Runs identity-cli login; `respond` sees stderr as it grows and returns lines to type. */
function runLogin(
  args: string[],
  respond: (stderr: string, written: number) => string[] | null,
  credentials: string,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs('src/main/identity-cli.ts'), 'login', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', PROUDAUTH_CREDENTIALS: credentials },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let written = 0;
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`identity-cli login timed out; stderr so far:\n${stderr}`));
    }, 60_000);
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
      const lines = respond(stderr, written);
      if (lines) {
        written += lines.length;
        for (const l of lines) child.stdin.write(`${l}\n`);
      }
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe('identity-cli login', () => {
  test('case=first administrator sign-in enrolls TOTP, shows recovery codes once and stores a working admin token/mode=headless', async (t) => {
    const h = await startHarness(t);
    const file = credentialsFile(t);
    const realm = uniqueRealmName();
    const password = 'first-admin-password-1';
    await bootstrapAdministrator(
      { ...h.ctx, keyring: h.ctx.keyring as NonNullable<typeof h.ctx.keyring>, signingAlgorithm: 'RS256' },
      { realm, email: 'admin@example.com', password },
    );
    const run = await runLogin(
      ['--realm', realm, '--email', 'admin@example.com', '--server', h.publicUrl],
      (err, written) => {
        if (written === 0 && err.includes('Password')) return [password];
        const key = /key: ([A-Z2-7]+)/.exec(err)?.[1];
        if (written === 1 && key) {
          const secret = decodeBase32(key);
          return [totpAt(secret, totpStep(Date.now()))];
        }
        return null;
      },
      file,
    );
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout);
    const origin = h.ctx.config.server.publicOrigin;
    assert.equal(out.realm, realm);
    assert.equal(out.issuer, `${origin}/realms/${realm}`);
    assert.deepEqual(out.completed_factors, ['pwd', 'totp']);
    assert.equal(out.user.email, 'admin@example.com');
    assert.match(out.user.id, /^usr_/);
    assert.equal(out.refreshable, true);
    assert.ok(Date.parse(out.expires_at) > Date.now());
    assert.equal(out.credentials, file);
    assert.match(run.stderr, /Logged in to realm \S+ as .*admin@example\.com/);
    assert.match(run.stderr, /The access token expires at \d{4}-/);
    assert.match(run.stderr, /otpauth:\/\/totp\//);
    assert.equal(
      (run.stderr.match(/^ {2}[a-z2-9]{5}-[a-z2-9]{5}$/gm) ?? []).length,
      10,
      'ten recovery codes shown',
    );

    assert.equal(statSync(file).mode & 0o777, 0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    const entry = stored.credentials[out.issuer];
    assert.equal(entry.realm, realm);
    assert.equal(entry.api_base, `${h.publicUrl}/api/v1/realms/${realm}`);
    assert.equal(entry.audience, `${origin}/api/v1/realms/${realm}`);
    assert.match(entry.refresh_token, /\S/);
    assert.equal(entry.expires_at, out.expires_at);
    for (const secret of [entry.access_token, entry.refresh_token]) {
      assert.ok(!run.stdout.includes(secret) && !run.stderr.includes(secret), 'tokens are never printed');
    }
    // The stored token is an admin token from an MFA session: the users API accepts it.
    const users = await h.get(`/api/v1/realms/${realm}/users`, {
      headers: { authorization: `Bearer ${entry.access_token}` },
    });
    assert.equal(users.status, 200, await users.clone().text());
    const listed = (await users.json()) as { items: { id: string }[] };
    assert.ok(listed.items.some((u) => u.id === out.user.id));
  });

  test('case=the authenticator prompt also takes a recovery code, which gets no admin token; --qr light draws for a light terminal/mode=headless', async (t) => {
    const h = await startHarness(t);
    const realm = uniqueRealmName();
    const password = 'first-admin-password-1';
    await bootstrapAdministrator(
      { ...h.ctx, keyring: h.ctx.keyring as NonNullable<typeof h.ctx.keyring>, signingAlgorithm: 'RS256' },
      { realm, email: 'admin@example.com', password },
    );
    const args = ['--realm', realm, '--email', 'admin@example.com', '--server', h.publicUrl];
    const first = await runLogin(
      [...args, '--qr=light'],
      (err, written) => {
        if (written === 0 && err.includes('Password')) return [password];
        const key = /key: ([A-Z2-7]+)/.exec(err)?.[1];
        if (written === 1 && key) return [totpAt(decodeBase32(key), totpStep(Date.now()))];
        return null;
      },
      credentialsFile(t),
    );
    assert.equal(first.code, 0, first.stderr);
    const uri = /^ {2}(otpauth:\/\/\S+)$/m.exec(first.stderr)?.[1];
    assert.ok(uri, first.stderr);
    assert.ok(first.stderr.includes(renderTerminalQr(uri, { style: 'light' })), 'the light-terminal QR code');
    assert.ok(!first.stderr.includes(renderTerminalQr(uri, { style: 'dark' })));
    const codes = first.stderr.match(/^ {2}[a-z2-9]{5}-[a-z2-9]{5}$/gm) ?? [];
    assert.equal(codes.length, 10);
    const recovery = codes[0]!.trim();

    // The phone is lost: the recovery code goes where the authenticator code would. The sign-in
    // completes, but a recovery-code sign-in gets no administration token (spec doc 1, Errors,
    // case rule 1), and the command says so.
    const secondFile = credentialsFile(t);
    const second = await runLogin(
      args,
      (err, written) => {
        if (written === 0 && err.includes('Password')) return [password];
        if (written === 1 && err.includes('Code from the authenticator app (or a recovery code)'))
          return [recovery];
        return null;
      },
      secondFile,
    );
    assert.equal(second.code, 2, second.stderr);
    assert.match(second.stderr, /signed in with a recovery code, which gets no administration token/);
    assert.match(second.stderr, /recovery-restricted/);
    assert.doesNotMatch(second.stderr, /That did not work/);
    assert.equal(second.stdout, '');
    assert.throws(() => statSync(secondFile), /ENOENT/, 'nothing is stored');
    const [used] = await h.ctx.db
      .query<{ n: string }>(
        'select count(*) as n from recovery_codes c join realms r on r.id = c.realm_id where r.name = $1 and c.used_at is not null',
        [realm],
      )
      .then((r) => r.rows);
    assert.ok(Number(used?.n) >= 1, 'the recovery code was accepted and spent');

    const bad = await runLogin([...args, '--qr', 'sepia'], () => null, credentialsFile(t));
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--qr must be one of dark, light, ansi/);
  });

  test('case=a wrong password is refused without completing/mode=headless', async (t) => {
    const file = credentialsFile(t);
    const { h, realm } = await signinSetup(t, {
      client: null,
      user: { email: 'op@example.com', password: 'right-password-1' },
    });
    let answers = 0;
    const run = await runLogin(
      ['--realm', realm.name, '--email', 'op@example.com', '--server', h.publicUrl],
      (err) => {
        const prompts = (err.match(/Password: /g) ?? []).length;
        if (prompts > answers) {
          answers = prompts;
          return ['wrong-password'];
        }
        return null;
      },
      file,
    );
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /ended failed|too_many_failures|try again/);
    assert.equal(run.stdout, '');
    assert.throws(() => statSync(file), /ENOENT/, 'nothing is stored');
  });
});
