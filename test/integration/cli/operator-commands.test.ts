// identity-cli maintenance, doctor, realm create and bootstrap while `proudauth dev` runs (docs/cli.md,
// "Commands that open the database"): on the embedded database, which only the server process can
// hold, they go through the server's internal listener with the operator token it publishes in the
// data directory; on PostgreSQL they open the database as usual. Either way they work and answer
// the same.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { TEST_DATABASE_URL } from '../../harness/test-db.ts';
import { Background, json, run, runProcess, scratchDeployment } from './cli-process.ts';

const LISTEN = {
  PROUDAUTH_SERVER_LISTEN: '127.0.0.1:0',
  PROUDAUTH_SERVER_INTERNAL_LISTEN: '127.0.0.1:0',
  PROUDAUTH_SERVER_DRAIN_DELAY: '0s',
};

const publicUrlOf = (out: string) => out.match(/public listener\s+(http:\/\/\S+)/)?.[1];
const internalUrlOf = (out: string) => out.match(/internal listener\s+(http:\/\/\S+)/)?.[1];

describe('identity-cli › operator commands while proudauth dev runs', () => {
  test('case=maintenance, doctor, realm create and bootstrap work against the running server', {
    timeout: 240_000,
  }, async (t) => {
    const dep = await scratchDeployment({ rootKey: TEST_DATABASE_URL !== null });
    t.after(() => dep.cleanup());
    const env = dep.env(LISTEN);
    const dev = new Background('proudauth', ['dev'], env);
    t.after(() => dev.kill());
    await dev.waitFor(/At first sign-in the administrator must enroll/, 90_000);
    const publicUrl = publicUrlOf(dev.stdout);
    const internalUrl = internalUrlOf(dev.stdout);
    assert.ok(publicUrl && internalUrl, dev.stdout);
    const embedded = dep.kind === 'pglite';
    const cli = (args: string[]) => run('identity-cli', args, { env });
    const viaServer = (stderr: string) => {
      if (embedded) assert.match(stderr, /done by the running proudauth dev \(pid \d+\)/);
    };

    const set = await cli([
      'maintenance',
      'set',
      '--mode',
      'read_only',
      '--message',
      'back soon',
      '--retry-after',
      '30',
    ]);
    assert.equal(set.code, 0, set.stderr);
    viaServer(set.stderr);
    assert.equal(json(set).mode, 'read_only');
    const status = await cli(['maintenance', 'status']);
    assert.equal(status.code, 0, status.stderr);
    assert.deepEqual(
      [json(status).mode, json(status).message, json(status).retry_after_seconds],
      ['read_only', 'back soon', 30],
    );
    const bad = await cli(['maintenance', 'set', '--mode', 'closed', '--retry-after', '0']);
    assert.equal(bad.code, 2, 'a value the operation refuses is an operator error');
    assert.match(bad.stderr, /--retry-after: too_small/);
    const off = await cli(['maintenance', 'off']);
    assert.equal(off.code, 0, off.stderr);
    assert.equal(json(off).mode, 'off');

    const doctor = await cli(['doctor']);
    assert.equal(doctor.code, 0, doctor.stderr);
    viaServer(doctor.stderr);
    assert.equal(json(doctor).ok, true);
    assert.equal(json(doctor).database, embedded ? 'pglite' : 'postgres');

    const created = await cli(['realm', 'create', 'other', '--display-name', 'Other']);
    assert.equal(created.code, 0, created.stderr);
    viaServer(created.stderr);
    assert.equal(json(created).name, 'other');
    const metadata = await fetch(`${publicUrl}/realms/other/.well-known/openid-configuration`);
    assert.equal(metadata.status, 200, 'the running server serves the new realm');
    const again = await cli(['realm', 'create', 'other']);
    assert.equal(again.code, 2);
    assert.match(again.stderr, /exists/);

    const file = join(dep.dataDir, 'admin-password');
    const bootstrap = (realm: string, password: string) => {
      writeFileSync(file, `${password}\n`, { mode: 0o600 });
      return cli([
        'bootstrap',
        '--realm',
        realm,
        '--admin-email',
        'ops@example.com',
        '--password-file',
        file,
      ]);
    };
    const boot = await bootstrap('third', 'a-long-enough-password-1');
    assert.equal(boot.code, 0, boot.stderr);
    viaServer(boot.stderr);
    assert.deepEqual([json(boot).realm, json(boot).realm_created], ['third', true]);
    const short = await bootstrap('fourth', 'short');
    assert.equal(short.code, 2);
    assert.match(short.stderr, /at least 12/);

    const access = join(dep.dataDir, 'operator-access.json');
    if (embedded) {
      // The token opens the operator operations, and nothing else does.
      assert.equal(statSync(access).mode & 0o777, 0o600);
      const { token } = JSON.parse(readFileSync(access, 'utf8')) as { token: string };
      const ask = (authorization?: string) =>
        fetch(`${internalUrl}/operator/doctor`, authorization ? { headers: { authorization } } : {});
      assert.equal((await ask()).status, 401);
      assert.equal((await ask('Bearer not-the-token')).status, 401);
      assert.equal((await ask(`Bearer ${token}`)).status, 200);
      assert.equal(
        (await fetch(`${publicUrl}/operator/doctor`, { headers: { authorization: `Bearer ${token}` } }))
          .status,
        404,
      );
    } else {
      assert.equal(existsSync(access), false, 'a PostgreSQL deployment publishes no operator access');
      assert.equal((await fetch(`${internalUrl}/operator/doctor`)).status, 404);
    }

    assert.deepEqual(await dev.stop('SIGTERM'), { code: 0, signal: null });
    assert.equal(existsSync(access), false, 'the access file goes with the process');
    // With the server stopped the commands open the database themselves.
    const alone = await cli(['doctor']);
    assert.equal(alone.code, 0, alone.stderr);
    assert.doesNotMatch(alone.stderr, /running proudauth dev/);
  });

  test('case=the embedded database held by a process without operator access: the error says what to do', {
    timeout: 60_000,
  }, async (t) => {
    if (TEST_DATABASE_URL) return t.skip('the embedded database only');
    const dep = await scratchDeployment();
    t.after(() => dep.cleanup());
    await run('proudauth', ['migrate'], { env: dep.env() });
    writeFileSync(join(dep.dataDir, 'proudauth.lock'), String(process.pid), { flag: 'wx' });
    // A child process: in this process the lock would name the command's own pid.
    const held = await runProcess('identity-cli', ['maintenance', 'status'], { env: dep.env() });
    assert.equal(held.code, 2, held.stderr);
    assert.match(held.stderr, /is in use by another ProudAuth process \(pid \d+\)/);
    assert.match(
      held.stderr,
      /offers no operator access \(only a running `proudauth dev` does\): wait for it or stop it/,
    );
  });
});
