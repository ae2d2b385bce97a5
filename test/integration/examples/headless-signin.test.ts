// examples/headless-signin.sh, which the README shows with its output: bash, curl, openssl and
// oathtool against a running server. The first administrator's sign-in enrolls TOTP and ends with
// tokens for the administration API that the API accepts; a later sign-in answers with a code.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { decodeJwt } from 'jose';
import { adminAudience } from '../../../src/kernel/audiences.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, exampleServer, missingTools, runExample } from './examples-kit.ts';

const missing = missingTools(['bash', 'curl', 'openssl', 'oathtool']);
const skip = missing.length > 0 ? `needs ${missing.join(', ')}` : false;

/**
 * A folder holding an `oathtool` that is the real one reading a clock `seconds` ahead, to put first
 * on the script's PATH.
 */
function authenticatorAhead(t: TestContext, seconds: number): string {
  const dir = mkdtempSync(join(tmpdir(), 'proudauth-oathtool-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const real = spawnSync('sh', ['-c', 'command -v oathtool'], { encoding: 'utf8' }).stdout.trim();
  const shim = join(dir, 'oathtool');
  writeFileSync(shim, `#!/bin/sh\nexec ${real} -N "@$(( $(date +%s) + ${seconds} ))" "$@"\n`);
  chmodSync(shim, 0o755);
  return dir;
}

interface Step {
  title: string;
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: the answers are checked member by member
  body: any;
}

/** The script prints `# TITLE: HTTP STATUS` and then the answer's JSON on one line, per step. */
function stepsOf(stdout: string): Step[] {
  const lines = stdout.trimEnd().split('\n');
  const steps: Step[] = [];
  for (let i = 0; i < lines.length; i += 2) {
    const head = /^# (\S+): HTTP (\d{3})$/.exec(lines[i] ?? '');
    assert.ok(head, `not a step heading: ${lines[i]}\n${stdout}`);
    steps.push({ title: head[1] as string, status: Number(head[2]), body: JSON.parse(lines[i + 1] ?? '') });
  }
  return steps;
}

test('the first administrator signs in with the script, enrolling TOTP, and the admin API accepts the token', {
  skip,
}, async (t) => {
  const s = await exampleServer(t);
  const env = { SERVER: s.origin, REALM: s.realm, EMAIL: ADMIN_EMAIL, PASSWORD: ADMIN_PASSWORD };
  const first = await runExample('bash', ['examples/headless-signin.sh'], env);
  assert.equal(first.code, 0, `${first.stdout}\n${first.stderr}`);
  const steps = stepsOf(first.stdout);
  assert.deepEqual(
    steps.map((x) => [x.title, x.status]),
    [
      ['start', 201],
      ['password', 200],
      ['totp/enroll', 200],
      ['totp/activate', 200],
      ['token', 200],
    ],
  );
  const [start, password, enroll, activate, token] = steps as [Step, Step, Step, Step, Step];
  assert.match(start.body.transaction_id, /^atx_/);
  assert.match(start.body.continuation_token, /^pa_tx_/);
  assert.deepEqual(
    password.body.next_actions.map((a: { type: string }) => a.type),
    // The first administrator carries the configure_totp required action, so TOTP is what is asked.
    ['enroll_totp'],
  );
  assert.match(enroll.body.one_time.totp.secret, /^[A-Z2-7]+$/);
  assert.equal(activate.body.status, 'completed');
  assert.equal(activate.body.one_time.recovery_codes.length, 10);
  assert.ok(activate.body.redirect_to.startsWith('http://127.0.0.1/callback?code='));

  const tokens = token.body;
  assert.equal(tokens.token_type, 'Bearer');
  assert.match(tokens.refresh_token, /^pa_rt_/);
  assert.equal(typeof tokens.id_token, 'string');
  // With openid granted the token may also name UserInfo (decision D18); the admin API is among them.
  assert.ok([decodeJwt(tokens.access_token).aud].flat().includes(adminAudience(s.origin, s.realm)));
  const users = await s.h.get(`/api/v1/realms/${s.realm}/users`, {
    headers: { authorization: `Bearer ${tokens.access_token}` },
  });
  assert.equal(users.status, 200);
  const listed = (await users.json()) as { items: { identifiers: { value: string }[] }[] };
  assert.deepEqual(
    listed.items.map((u) => u.identifiers[0]?.value),
    [ADMIN_EMAIL],
  );

  // A returning sign-in answers the authenticator with the enrolled secret. The service refuses a
  // code of a time step already used, so the next sign-in happens a step later: the server's clock
  // moves 30 s ahead, and so does the authenticator's (oathtool reading the same shifted time).
  s.h.clock.advance(30_000);
  const again = await runExample('bash', ['examples/headless-signin.sh'], {
    ...env,
    PATH: `${authenticatorAhead(t, 30)}:${process.env.PATH ?? ''}`,
    TOTP_SECRET: enroll.body.one_time.totp.secret,
  });
  assert.equal(again.code, 0, `${again.stdout}\n${again.stderr}`);
  assert.deepEqual(
    stepsOf(again.stdout).map((x) => [x.title, x.status]),
    [
      ['start', 201],
      ['password', 200],
      ['totp', 200],
      ['token', 200],
    ],
  );
  // The password's answer offers the authenticator and the recovery codes as alternatives of one
  // group (docs/signin.md, "Alternatives"); the script names them and answers totp.
  const secondSteps = stepsOf(again.stdout);
  assert.deepEqual(
    secondSteps[1]?.body.next_actions.map(
      (a: { type: string; required: boolean; options?: { group?: string } }) => [
        a.type,
        a.required,
        a.options?.group,
      ],
    ),
    [
      ['totp', false, 'mfa'],
      ['recovery_code', false, 'mfa'],
    ],
  );
  assert.match(again.stderr, /second factor, any one of: totp recovery_code; answering totp/);
  // Without the secret it stops, saying what is missing.
  const withoutSecret = await runExample('bash', ['examples/headless-signin.sh'], env);
  assert.equal(withoutSecret.code, 1);
  assert.match(withoutSecret.stderr, /set TOTP_SECRET/);
});

test('a wrong password stops the script with a message and a failing exit', { skip }, async (t) => {
  const s = await exampleServer(t);
  const r = await runExample('bash', ['examples/headless-signin.sh'], {
    SERVER: s.origin,
    REALM: s.realm,
    EMAIL: ADMIN_EMAIL,
    PASSWORD: 'not-the-password',
  });
  assert.equal(r.code, 1);
  const steps = stepsOf(r.stdout);
  assert.deepEqual(
    steps.map((x) => x.title),
    ['start', 'password'],
  );
  assert.deepEqual(steps[1]?.body.next_actions, [{ type: 'password', required: true, fields: ['password'] }]);
  assert.match(r.stderr, /the email or password was not accepted/);
});
