// `proudauth dev` as a developer meets it: an empty data directory (or, when the run uses
// PostgreSQL, an empty database named by PROUDAUTH_DATABASE_URL) becomes a running server with realm
// main and a first administrator whose credentials are printed once.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { s256Challenge } from '../../../src/kernel/pkce.ts';
import { totpCode } from '../../harness/signin-kit.ts';
import { TEST_DATABASE_URL } from '../../harness/test-db.ts';
import { Background, run, scratchDeployment } from './cli-process.ts';

const LISTEN = {
  PROUDAUTH_SERVER_LISTEN: '127.0.0.1:0',
  PROUDAUTH_SERVER_INTERNAL_LISTEN: '127.0.0.1:0',
  PROUDAUTH_SERVER_DRAIN_DELAY: '0s',
  // Info, so the start-up, request and shutdown lines are there to check.
  PROUDAUTH_OBSERVABILITY_LOG_LEVEL: 'info',
};

const RUNNING = /key set\s+\S+\/jwks\n/;
const publicUrlOf = (out: string) => out.match(/public listener\s+(http:\/\/\S+)/)?.[1];
const internalUrlOf = (out: string) => out.match(/internal listener\s+(http:\/\/\S+)/)?.[1];

/** The JSON log lines of an output (stdout is not a terminal, so logs are JSON). */
const logLines = (out: string): Record<string, unknown>[] =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

/** The banner: from its first line to the last line given, with no log line inside. */
function assertBannerIsOneBlock(out: string, last: RegExp): void {
  const lines = out.split('\n');
  const from = lines.findIndex((l) => l.startsWith('ProudAuth is running'));
  const to = lines.findIndex((l, i) => i > from && last.test(l));
  assert.ok(from >= 0 && to > from, out);
  const inside = lines.slice(from, to + 1).filter((l) => l.startsWith('{'));
  assert.deepEqual(inside, [], 'no log line inside the banner');
}

async function getJson(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

async function post(base: string, path: string, body: unknown, token?: string) {
  const res = await fetch(`${base}/api/v1/realms/main/auth/transactions${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { 'x-transaction-token': token } : {}) },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary members of response bodies
  return { status: res.status, body: (await res.json()) as Record<string, any> };
}

/** The account page's forgotten-password path for the dev administrator, through the API it uses. */
async function recoverAdminPassword(dev: Background, base: string) {
  const started = await post(base, '', {
    client_id: 'account',
    redirect_uri: 'http://localhost:8080/ui/account/',
    code_challenge: s256Challenge('w'.repeat(43)),
    code_challenge_method: 'S256',
    scope: 'openid',
  });
  assert.equal(started.status, 201, JSON.stringify(started.body));
  const id = started.body.transaction_id as string;
  const token = started.body.continuation_token as string;
  const identified = await post(base, `/${id}/identify`, { identifier: 'admin@example.com' }, token);
  assert.equal(identified.status, 200, JSON.stringify(identified.body));
  const reset = await post(base, `/${id}/password/reset`, {}, token);
  assert.equal(reset.status, 200, JSON.stringify(reset.body));
  const [, code] = await dev.waitFor(/mail to admin@example\.com: "[^"]*" -> (\d{6})/, 30_000);
  const verified = await post(base, `/${id}/otp/verify`, { code }, token);
  assert.equal(verified.status, 200, JSON.stringify(verified.body));
  // The administrator's required authenticator app comes first, then the new password.
  const enrolled = await post(base, `/${id}/totp/enroll`, {}, token);
  assert.equal(enrolled.status, 200, JSON.stringify(enrolled.body));
  const secret = enrolled.body.one_time.totp.secret as string;
  const activated = await post(base, `/${id}/totp/activate`, { code: totpCode(secret, new Date()) }, token);
  assert.deepEqual(
    activated.body.next_actions.map((a: { type: string }) => a.type),
    ['update_password'],
    JSON.stringify(activated.body),
  );
  return post(base, `/${id}/password/update`, { new_password: 'a recovered dev admin passphrase' }, token);
}

describe('proudauth dev', () => {
  test('case=starts from nothing, shows the first administrator once and restarts on the same data', {
    timeout: 150_000,
  }, async (t) => {
    // The embedded database gets its root key generated into the data directory; PostgreSQL needs one.
    const dep = await scratchDeployment({ rootKey: TEST_DATABASE_URL !== null });
    t.after(() => dep.cleanup());
    const env = dep.env(LISTEN);
    const started: Background[] = [];
    t.after(() => {
      for (const p of started) p.kill();
    });

    const first = new Background('proudauth', ['dev'], env);
    started.push(first);
    await first.waitFor(/At first sign-in the administrator must enroll/, 90_000);
    const email = first.stdout.match(/^\s+email\s+(\S+)$/m)?.[1];
    const password = first.stdout.match(/^\s+password\s+(\S+)$/m)?.[1];
    assert.equal(email, 'admin@example.com');
    assert.ok(password && password.length >= 16, 'a generated password is shown');
    assert.match(
      first.stdout,
      dep.kind === 'postgres' ? /ProudAuth is running \(PostgreSQL\)/ : /embedded database in /,
    );

    const publicUrl = publicUrlOf(first.stdout);
    const internalUrl = internalUrlOf(first.stdout);
    assert.ok(publicUrl && internalUrl, first.stdout);
    assert.deepEqual(await getJson(`${publicUrl}/health/ready`), { status: 200, body: { status: 'ready' } });
    const jwks = await getJson(`${publicUrl}/realms/main/jwks`);
    assert.equal(jwks.status, 200);
    const keys = jwks.body.keys as { kid: string }[];
    assert.equal(keys.length, 1);
    const status = await getJson(`${internalUrl}/status`);
    assert.equal((status.body.capabilities as Record<string, string>).signing, 'ok');

    if (dep.kind === 'pglite') {
      // The embedded database belongs to this process: a second server on the same data is refused.
      const second = await run('proudauth', ['migrate'], { env });
      assert.notEqual(second.code, 0);
      assert.match(second.stderr, /is in use by another ProudAuth process \(pid \d+\)/);
    }

    assert.deepEqual(await first.stop('SIGTERM'), { code: 0, signal: null });
    assert.equal(first.stdout.split(password).length - 1, 1, 'the password is printed exactly once');
    assertBannerIsOneBlock(first.stdout, /must enroll an authenticator app/);
    const logged = logLines(first.stdout);
    const startedLine = logged.find((l) => l.msg === 'started');
    assert.ok(startedLine, first.stdout);
    assert.equal(startedLine.command, 'dev');
    assert.equal(startedLine.realm, 'main');
    assert.equal(startedLine.database, dep.kind === 'postgres' ? 'postgresql' : 'embedded');
    assert.equal(startedLine.public, publicUrl);
    assert.ok(
      logged.some((l) => l.msg === 'request' && l.route === '/realms/:realm/jwks' && l.realm === 'main'),
      'requests are logged',
    );
    const shutdown = logged.filter((l) => String(l.msg).startsWith('shutdown')).map((l) => [l.msg, l.signal]);
    assert.deepEqual(shutdown, [
      ['shutdown: signal received, draining', 'SIGTERM'],
      ['shutdown: closed', 'SIGTERM'],
    ]);

    const again = new Background('proudauth', ['dev'], env);
    started.push(again);
    await again.waitFor(RUNNING, 90_000);
    const againUrl = publicUrlOf(again.stdout);
    assert.deepEqual(await getJson(`${againUrl}/health/ready`), { status: 200, body: { status: 'ready' } });
    // The restart banner says how to get back in when the administrator password is lost, and
    // that way works: a reset code shown on this terminal, then a new password.
    assert.match(
      again.stdout,
      /Lost the password of admin@example\.com\?[^\n]*\n[^\n]*Forgot your password\?/,
    );
    const recovered = await recoverAdminPassword(again, againUrl as string);
    assert.equal(recovered.status, 200, JSON.stringify(recovered.body));
    assert.notEqual(recovered.body.status, 'failed', JSON.stringify(recovered.body));
    const jwksAgain = await getJson(`${againUrl}/realms/main/jwks`);
    assert.deepEqual(
      (jwksAgain.body.keys as { kid: string }[]).map((k) => k.kid),
      keys.map((k) => k.kid),
      'the same signing key after the restart',
    );
    assert.deepEqual(await again.stop('SIGTERM'), { code: 0, signal: null });
    assert.doesNotMatch(again.stdout, /First administrator|password {2}/, 'no new credentials');
    assert.equal(again.stdout.includes(password), false);
  });

  test('case=a new user registers in realm main and reads the code on the terminal, from the dev mail folder', {
    timeout: 150_000,
  }, async (t) => {
    const dep = await scratchDeployment({ rootKey: TEST_DATABASE_URL !== null });
    t.after(() => dep.cleanup());
    const dev = new Background('proudauth', ['dev'], dep.env(LISTEN));
    t.after(() => dev.kill());
    await dev.waitFor(RUNNING, 90_000);
    assert.match(dev.stdout, /mail\s+written to \S+mail \(codes and links shown here\)/);
    const publicUrl = publicUrlOf(dev.stdout) as string;
    const post = async (path: string, body: unknown, token?: string) => {
      const res = await fetch(`${publicUrl}/api/v1/realms/main/auth/transactions${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { 'x-transaction-token': token } : {}) },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary members of response bodies
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    };
    const started = await post('', {
      client_id: 'account',
      redirect_uri: 'http://localhost:8080/ui/account/',
      code_challenge: s256Challenge('v'.repeat(43)),
      code_challenge_method: 'S256',
      scope: 'openid',
      intent: 'register',
    });
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const id = started.body.transaction_id as string;
    const token = started.body.continuation_token as string;
    const registered = await post(
      `/${id}/registration`,
      { email: 'new@example.com', password: 'a long new password' },
      token,
    );
    assert.deepEqual(
      registered.body.next_actions.map((a: { type: string }) => a.type),
      ['verify_email'],
    );
    assert.equal((await post(`/${id}/otp/send`, { purpose: 'verify_email' }, token)).status, 200);
    const [, code, file] = await dev.waitFor(
      /mail to new@example\.com: "[^"]*" -> (\d{6}) \((\S+\.eml)\)/,
      30_000,
    );
    assert.match(
      readFileSync(file as string, 'utf8'),
      new RegExp(`code is ${code}`),
      'the .eml file holds the code',
    );
    const done = await post(`/${id}/otp/verify`, { code }, token);
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.deepEqual(await dev.stop('SIGTERM'), { code: 0, signal: null });
  });
});
