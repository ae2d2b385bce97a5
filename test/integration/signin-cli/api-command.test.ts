// identity-cli api and logout as an operator runs them: real child processes using the admin
// token `identity-cli login` stored, against a server with its own realm.
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { loggedIn, type Operator, parse, type Stored, tempDir } from '../../harness/cli-operator-kit.ts';
import { startHarness } from '../../harness/harness.ts';
import { childEnv, run } from '../cli/cli-process.ts';

const LIMIT = { timeout: 120_000 };

/** What the admin API says to a bearer token, straight over HTTP. */
const usersStatus = async (op: Operator, token: string): Promise<number> =>
  (await op.h.get(`/api/v1/realms/${op.realm}/users`, { headers: { authorization: `Bearer ${token}` } }))
    .status;

describe('identity-cli api', () => {
  test('case=calls the admin API with the stored token and prints JSON/mode=headless', LIMIT, async (t) => {
    const op = await loggedIn(t);
    assert.equal(statSync(op.file).mode & 0o777, 0o600);
    assert.equal(statSync(dirname(op.file)).mode & 0o777, 0o700);

    const listed = await op.cli(['api', 'GET', '/users']);
    assert.equal(listed.code, 0, listed.stderr);
    const page = parse(listed);
    assert.ok(page.items.some((u: Stored) => u.id === op.entry().user.id));

    const body = join(dirname(op.file), 'user.json');
    writeFileSync(body, JSON.stringify({ email: 'bob@example.com' }));
    const created = await op.cli(['api', 'post', '/users', '-data', `@${body}`]);
    assert.equal(created.code, 0, created.stderr);
    const bob = parse(created);
    assert.match(bob.id, /^usr_/);

    const fromStdin = await op.cli(['api', 'POST', '/users', '-data', '@-'], '{"email":"carol@example.com"}');
    assert.equal(fromStdin.code, 0, fromStdin.stderr);

    const read = await op.cli(['api', 'GET', `/users/${bob.id}`, '-realm', op.realm]);
    assert.equal(parse(read).id, bob.id);

    const deleted = await op.cli(['api', 'DELETE', `/users/${bob.id}`]);
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.equal(deleted.stdout, '', 'a 204 prints nothing');

    for (const r of [listed, created, read]) {
      assert.ok(!r.stdout.includes(op.entry().access_token) && !r.stderr.includes(op.entry().access_token));
    }
  });

  test('case=an error answer exits 1 with the problem document/mode=headless', LIMIT, async (t) => {
    const op = await loggedIn(t);
    const missing = await op.cli(['api', 'GET', `/users/usr_${'0'.repeat(26)}`]);
    assert.equal(missing.code, 1);
    assert.equal(parse(missing).code, 'not_found');
    assert.match(missing.stderr, /GET \/users\/usr_0+: HTTP 404 not_found/);

    const invalid = await op.cli(['api', 'POST', '/users', '-data', '{"nickname":"x"}']);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /HTTP (400|422)/);

    const outside = await op.cli(['api', 'GET', '/../../../realms/x/oauth/userinfo']);
    assert.equal(outside.code, 2);
    assert.match(outside.stderr, /leaves/);
    const notJson = await op.cli(['api', 'POST', '/users', '-data', '{email:']);
    assert.equal(notJson.code, 2);
    assert.match(notJson.stderr, /--data is not JSON/);
  });

  test(
    'case=an expired access token is refreshed and the rotated refresh token stored/mode=headless',
    LIMIT,
    async (t) => {
      const op = await loggedIn(t);
      const before = op.entry();
      op.writeEntry({ ...before, expires_at: new Date(Date.now() - 60_000).toISOString() });

      const r = await op.cli(['api', 'GET', '/users']);
      assert.equal(r.code, 0, r.stderr);
      assert.ok(Array.isArray(parse(r).items));
      const after = op.entry();
      assert.notEqual(after.access_token, before.access_token);
      assert.notEqual(after.refresh_token, before.refresh_token);
      assert.ok(Date.parse(after.expires_at) > Date.now());
      assert.equal(statSync(op.file).mode & 0o777, 0o600);
      assert.equal(await usersStatus(op, after.access_token), 200);

      // A token the server refuses before its stored expiry is refreshed once, and the call retried.
      op.writeEntry({ ...after, access_token: `${after.access_token.slice(0, -4)}AAAA` });
      const retried = await op.cli(['api', 'GET', '/users']);
      assert.equal(retried.code, 0, retried.stderr);
      assert.notEqual(op.entry().refresh_token, after.refresh_token);
    },
  );

  test(
    'case=parallel commands with an expired token refresh once and all succeed/mode=headless',
    LIMIT,
    async (t) => {
      const op = await loggedIn(t);
      op.writeEntry({ ...op.entry(), expires_at: new Date(Date.now() - 60_000).toISOString() });
      const runs = await Promise.all([1, 2, 3].map(() => op.cli(['api', 'GET', '/users'])));
      for (const r of runs) assert.equal(r.code, 0, r.stderr);
      // Had two of them rotated the same refresh token, reuse detection would have ended the family.
      const families = await op.h.ctx.db.query<{ revoked_at: Date | null; tokens: number }>(
        `select f.revoked_at, (select count(*)::int from refresh_tokens t
                                where t.realm_id = f.realm_id and t.family_id = f.id) as tokens
           from refresh_families f join realms r on r.id = f.realm_id where r.name = $1`,
        [op.realm],
      );
      assert.deepEqual(families.rows, [{ revoked_at: null, tokens: 2 }], 'one rotation, family live');
      const again = await op.cli(['api', 'GET', '/users']);
      assert.equal(again.code, 0, again.stderr);
    },
  );
});

describe('identity-cli api and logout with --config', () => {
  test(
    "case=the configuration's public origin chooses the stored sign-in/mode=headless",
    LIMIT,
    async (t) => {
      const op = await loggedIn(t);
      const dir = tempDir(t);
      const here = join(dir, 'here.yaml');
      const elsewhere = join(dir, 'elsewhere.yaml');
      writeFileSync(here, `server:\n  public_origin: ${op.h.ctx.config.server.publicOrigin}\n`);
      writeFileSync(elsewhere, 'server:\n  public_origin: https://elsewhere.example.test\n');

      const none = await op.cli(['api', 'GET', '/users', '--config', elsewhere]);
      assert.equal(none.code, 2, none.stderr);
      assert.match(none.stderr, /not logged in: run identity-cli login --realm NAME/);
      const listed = await op.cli(['api', 'GET', '/users', '--config', here]);
      assert.equal(listed.code, 0, listed.stderr);
      assert.ok(Array.isArray(parse(listed).items));

      assert.equal((await op.cli(['logout', '--config', elsewhere])).code, 2);
      const out = await op.cli(['logout', '--config', here]);
      assert.equal(out.code, 0, out.stderr);
      assert.equal(parse(out).revoked, true);
    },
  );
});

describe('identity-cli logout', () => {
  test('case=revokes the tokens and deletes the credentials file/mode=headless', LIMIT, async (t) => {
    const op = await loggedIn(t);
    const entry = op.entry();
    const r = await op.cli(['logout']);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(parse(r), { realm: op.realm, issuer: op.issuer, revoked: true, credentials: op.file });
    assert.throws(() => statSync(op.file), /ENOENT/);
    assert.equal(await usersStatus(op, entry.access_token), 401);
    const refreshed = await op.h.get(`/realms/${op.realm}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: 'identity-cli',
        refresh_token: entry.refresh_token,
      }),
    });
    assert.equal(refreshed.status, 400);

    const after = await op.cli(['api', 'GET', '/users']);
    assert.equal(after.code, 2);
    assert.match(after.stderr, /not logged in: run identity-cli login/);
  });

  test(
    'case=a server without the revocation endpoint still loses the local credential/mode=headless',
    LIMIT,
    async (t) => {
      const h = await startHarness(t);
      const file = join(tempDir(t), 'creds.json');
      const env = childEnv({ PROUDAUTH_CREDENTIALS: file });
      const issuer = `${h.ctx.config.server.publicOrigin}/realms/gone`;
      const entry = (realm: string, at: string) => ({
        issuer: `${at}/realms/${realm}`,
        realm,
        server: h.publicUrl,
        audience: `${at}/api/v1/realms/${realm}`,
        api_base: `${h.publicUrl}/api/v1/realms/${realm}`,
        user: { id: 'usr_x', name: null, email: null },
        access_token: 'not-a-token',
        expires_at: new Date(Date.now() + 60_000).toISOString(),
        refresh_token: 'not-a-refresh-token',
        updated_at: new Date().toISOString(),
      });
      const other = entry('kept', 'https://elsewhere.example');
      writeFileSync(
        file,
        JSON.stringify({
          version: 1,
          credentials: { [issuer]: entry('gone', h.ctx.config.server.publicOrigin), [other.issuer]: other },
        }),
        { mode: 0o600 },
      );
      const ambiguous = await run('identity-cli', ['logout'], { env });
      assert.equal(ambiguous.code, 2);
      assert.match(ambiguous.stderr, /several stored sign-ins match/);

      // Realm `gone` does not exist there, so /realms/gone/oauth/revoke answers 404.
      const r = await run('identity-cli', ['logout', '-realm', 'gone'], { env });
      assert.equal(r.code, 0, r.stderr);
      assert.equal(parse(r).revoked, false);
      assert.match(r.stderr, /no revocation endpoint/);
      const left = JSON.parse(readFileSync(file, 'utf8'));
      assert.deepEqual(Object.keys(left.credentials), [other.issuer]);
      assert.equal(statSync(file).mode & 0o777, 0o600);
    },
  );

  test('case=api without a stored sign-in tells the operator to log in/mode=headless', LIMIT, async (t) => {
    const file = join(tempDir(t), 'none.json');
    const r = await run('identity-cli', ['api', 'GET', '/users', '-realm', 'main'], {
      env: childEnv({ PROUDAUTH_CREDENTIALS: file }),
    });
    assert.equal(r.code, 2);
    assert.match(r.stderr, /not logged in to realm main: run identity-cli login --realm main/);
    assert.equal(r.stdout, '');
  });
});
