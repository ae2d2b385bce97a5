// identity-cli login as an operator runs it: a child process answering prompts on stdin.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { decodeBase32 } from '../../../src/mfa/base32.ts';
import { totpAt, totpStep } from '../../../src/mfa/otp.ts';
import { bootstrapAdministrator } from '../../../src/users/bootstrap.service.ts';
import { startHarness, uniqueRealmName } from '../../harness/harness.ts';
import { signinSetup } from '../../harness/signin-kit.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs identity-cli login; `respond` sees stderr as it grows and returns lines to type. */
function runLogin(
  args: string[],
  respond: (stderr: string, written: number) => string[] | null,
): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main/identity-cli.ts', 'login', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '' },
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
  test('case=first administrator sign-in enrolls TOTP and shows recovery codes once/mode=headless', async (t) => {
    const h = await startHarness(t);
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
    );
    assert.equal(run.code, 0, run.stderr);
    const out = JSON.parse(run.stdout);
    assert.equal(out.status, 'completed');
    assert.deepEqual(out.completed_factors, ['pwd', 'totp']);
    assert.match(out.redirect_to, /^http:\/\/127\.0\.0\.1\/callback\?code=/);
    assert.match(run.stderr, /otpauth:\/\/totp\//);
    assert.equal(
      (run.stderr.match(/^ {2}[a-z2-9]{5}-[a-z2-9]{5}$/gm) ?? []).length,
      10,
      'ten recovery codes shown',
    );
  });

  test('case=a wrong password is refused without completing/mode=headless', async (t) => {
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
    );
    assert.notEqual(run.code, 0);
    assert.match(run.stderr, /ended failed|too_many_failures|try again/);
    assert.equal(run.stdout, '');
  });
});
