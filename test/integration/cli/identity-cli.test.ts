// identity-cli as an operator runs it, over a deployment of its own (a data directory, or a
// PostgreSQL database when the run uses one), asserting exit codes, output and rows. Commands run in
// this process with injected argv, environment and streams (cli-process.ts `run`); what only a
// process shows, the entry points starting and the lock held by another process, runs as a child.
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { verify } from '@node-rs/argon2';
import type { Db } from '../../../src/platform/db/db.ts';
import {
  childEnv,
  type Deployment,
  json,
  newRootKey,
  type RunResult,
  run,
  runProcess,
  scratchDeployment,
} from './cli-process.ts';

const ORIGIN = 'https://id.example.test';
const LIMIT = { timeout: 120_000 };

let dep: Deployment;
let unmigrated: RunResult;
let migrated: RunResult;

const cli = (args: string[], extra: { env?: Record<string, string>; input?: string } = {}) =>
  run('identity-cli', args, {
    env: dep.env({ PROUDAUTH_SERVER_PUBLIC_ORIGIN: ORIGIN, ...extra.env }),
    ...(extra.input !== undefined ? { input: extra.input } : {}),
  });

function passwordFile(name: string, content: string): string {
  const file = join(dep.dataDir, name);
  writeFileSync(file, content, { mode: 0o600 });
  return file;
}

const rows = <R = Record<string, unknown>>(db: Db, sql: string, params: unknown[]) =>
  db.query<R>(sql, params).then((r) => r.rows);

/** Every form a 32-byte key may be written in: none of them may ever be printed. */
function keyForms(base64Key: string): string[] {
  const raw = Buffer.from(base64Key, 'base64');
  return [base64Key, base64Key.replace(/=+$/, ''), raw.toString('hex'), raw.toString('base64url')];
}

describe('identity-cli', () => {
  before(async () => {
    dep = await scratchDeployment();
    // On an empty database a command refuses to run; `proudauth migrate` then applies the schema.
    unmigrated = await cli(['realm', 'create', 'early']);
    migrated = await run('proudauth', ['migrate'], { env: dep.env() });
  }, LIMIT);
  after(() => dep?.cleanup());

  test('case=commands refuse a database without the schema until proudauth migrate ran', () => {
    assert.notEqual(unmigrated.code, 0);
    assert.match(unmigrated.stderr, /schema is not current: run `proudauth migrate` first/);
    assert.equal(unmigrated.stdout, '');
    assert.equal(migrated.code, 0, migrated.stderr);
    const report = json(migrated);
    assert.equal(report.current, true);
    assert.ok(Array.isArray(report.applied) && report.applied.length > 0);
  });

  test('case=generate-root-key prints a new random 32-byte key in base64', LIMIT, async () => {
    const [a, b] = await Promise.all([
      run('identity-cli', ['generate-root-key'], { env: childEnv({}) }),
      run('identity-cli', ['generate-root-key'], { env: childEnv({}) }),
    ]);
    for (const r of [a, b]) {
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /^[A-Za-z0-9+/]{43}=\n$/);
      assert.equal(Buffer.from(r.stdout.trim(), 'base64').length, 32);
    }
    assert.notEqual(a.stdout, b.stdout);
  });

  test('case=realm create prints the realm with its issuer; creating it again exits 2', LIMIT, async () => {
    const created = await cli(['realm', 'create', 'acme']);
    assert.equal(created.code, 0, created.stderr);
    const realm = json(created);
    assert.match(String(realm.id), /^rlm_/);
    assert.equal(realm.name, 'acme');
    assert.equal(realm.issuer, `${ORIGIN}/realms/acme`);

    const again = await cli(['realm', 'create', 'acme']);
    assert.equal(again.code, 2);
    assert.equal(again.stdout, '');
    assert.match(again.stderr, /realm acme already exists/);
  });

  test('case=realm set-login-ui stores a new policy revision and refuses a non-http URL', LIMIT, async () => {
    const created = await cli(['realm', 'create', 'uirealm']);
    assert.equal(created.code, 0, created.stderr);
    const set = await cli(['realm', 'set-login-ui', 'uirealm', 'https://login.example.com/signin']);
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(json(set), {
      realm: 'uirealm',
      policy_revision: 2,
      login_ui_url: 'https://login.example.com/signin',
    });
    const same = await cli(['realm', 'set-login-ui', 'uirealm', 'https://login.example.com/signin']);
    assert.equal(json(same).policy_revision, 2, 'an unchanged policy makes no new revision');
    const bad = await cli(['realm', 'set-login-ui', 'uirealm', 'javascript:alert(1)']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /http or https/);
    const missing = await cli(['realm', 'set-login-ui', 'nosuchrealm', 'https://login.example.com/']);
    assert.equal(missing.code, 2);
  });

  test('case=realm create refuses an invalid name as an operator error', LIMIT, async () => {
    const r = await cli(['realm', 'create', 'Not_A_Name']);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /invalid realm name "Not_A_Name"/);
    assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
  });

  test('case=bootstrap creates the realm and a first administrator who must enroll TOTP', LIMIT, async () => {
    const password = 'correct-horse-battery-9';
    const file = passwordFile('admin-password', `${password}\n`);
    const r = await cli([
      'bootstrap',
      '--realm',
      'main',
      '--admin-email',
      'a@example.com',
      '--password-file',
      file,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const out = json(r);
    assert.equal(out.realm, 'main');
    assert.equal(out.realm_created, true);
    assert.deepEqual(out.required_actions, ['configure_totp']);
    assert.equal(out.issuer, `${ORIGIN}/realms/main`);
    const userId = String(out.user_id);
    assert.match(userId, /^usr_/);

    // The same address again, differently cased, is refused and creates nothing.
    const again = await cli([
      'bootstrap',
      '--realm',
      'main',
      '--admin-email',
      'A@Example.com',
      '--password-file',
      file,
    ]);
    assert.notEqual(again.code, 0);
    assert.match(again.stderr, /already exists/);

    await dep.withDb(async (db) => {
      const realmId = String(out.realm_id);
      const users = await rows(db, 'select * from users where realm_id = $1', [realmId]);
      assert.equal(users.length, 1, 'exactly one account');
      assert.equal(users[0]?.id, userId);
      assert.equal(users[0]?.state, 'active');
      assert.deepEqual(users[0]?.required_actions, ['configure_totp']);

      const identifiers = await rows(
        db,
        'select type, value, verified, is_primary, verified_at from user_identifiers where realm_id = $1 and user_id = $2',
        [realmId, userId],
      );
      assert.equal(identifiers.length, 1);
      assert.equal(identifiers[0]?.type, 'email');
      assert.equal(identifiers[0]?.value, 'a@example.com');
      assert.equal(identifiers[0]?.verified, true);
      assert.equal(identifiers[0]?.is_primary, true);
      assert.notEqual(identifiers[0]?.verified_at, null);

      const [cred] = await rows<{ hash: string; pepper_version: number | null }>(
        db,
        'select hash, pepper_version from password_credentials where realm_id = $1 and user_id = $2',
        [realmId, userId],
      );
      assert.ok(cred);
      assert.ok(cred.hash.startsWith('$argon2id$'), cred.hash);
      assert.equal(cred.pepper_version, null);
      assert.equal(await verify(cred.hash, password), true, 'the first line of the file is the password');

      const roles = await rows(
        db,
        `select r.name, a.scope_type from role_assignments a join roles r on r.realm_id = a.realm_id and r.id = a.role_id
          where a.realm_id = $1 and a.subject_type = 'user' and a.subject_id = $2`,
        [realmId, userId],
      );
      assert.deepEqual(roles, [{ name: 'realm-admin', scope_type: 'realm' }]);

      const audit = await rows(
        db,
        `select id, signal, actor_type, subject_type, subject_id from audit_events
          where realm_id = $1 and type = 'bootstrap.administrator_created'`,
        [realmId],
      );
      assert.equal(audit.length, 1);
      assert.equal(audit[0]?.signal, 'bootstrap');
      assert.equal(audit[0]?.actor_type, 'operator');
      assert.equal(audit[0]?.subject_id, userId);

      const events = await rows<{ event_type: string; data: Record<string, unknown> }>(
        db,
        'select event_type, data from outbox where realm_id = $1 order by id',
        [realmId],
      );
      assert.deepEqual(events.find((e) => e.event_type === 'user.created')?.data, {
        user_id: userId,
        created_via: 'bootstrap',
      });
      assert.deepEqual(events.find((e) => e.event_type === 'security.alert')?.data, {
        signal: 'bootstrap',
        audit_event_id: audit[0]?.id,
        event_type: 'bootstrap.administrator_created',
        actor_type: 'operator',
        actor_id: null,
        subject_type: 'user',
        subject_id: userId,
      });
      assert.equal(events.length, 2, 'no other event');
      assert.doesNotMatch(JSON.stringify(events), /a@example\.com/i, 'events carry no email address');
    });
  });

  test('case=bootstrap refuses a short password and creates nothing', LIMIT, async () => {
    const file = passwordFile('short-password', 'too-short\n');
    const r = await cli([
      'bootstrap',
      '--realm',
      'shortpw',
      '--admin-email',
      's@example.com',
      '--password-file',
      file,
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /at least 12 characters/);
    assert.equal(r.stdout, '');
    await dep.withDb(async (db) => {
      assert.deepEqual(await rows(db, `select id from realms where name = 'shortpw'`, []), []);
    });
  });

  test('case=bootstrap reads the password from standard input when no file is given', LIMIT, async () => {
    const password = 'typed-into-a-pipe-42';
    const r = await cli(['bootstrap', '--realm', 'piped', '--admin-email', 'p@example.com'], {
      input: `${password}\n`,
    });
    assert.equal(r.code, 0, r.stderr);
    const out = json(r);
    await dep.withDb(async (db) => {
      const [cred] = await rows<{ hash: string }>(
        db,
        'select hash from password_credentials where realm_id = $1 and user_id = $2',
        [out.realm_id, out.user_id],
      );
      assert.ok(cred);
      assert.equal(await verify(cred.hash, password), true);
    });
  });

  test('case=bootstrap checks the database before it asks for the password', LIMIT, async (t) => {
    // A database without the schema: refused before any prompt.
    const empty = await scratchDeployment();
    t.after(() => empty.cleanup());
    const early = await run(
      'identity-cli',
      ['bootstrap', '--realm', 'early', '--admin-email', 'e@example.com'],
      {
        env: empty.env(),
        input: 'never-read-password-1\n',
      },
    );
    assert.equal(early.code, 1, early.stderr);
    assert.match(early.stderr, /schema is not current: run `proudauth migrate` first/);
    assert.doesNotMatch(early.stderr, /Password/);

    if (dep.kind !== 'pglite') return;
    // The embedded database held by another live process (this test's): refused before any prompt.
    const lock = join(dep.dataDir, 'proudauth.lock');
    writeFileSync(lock, String(process.pid), { flag: 'wx' });
    try {
      // A child process: in this process the lock would name the command's own pid.
      const held = await runProcess(
        'identity-cli',
        ['bootstrap', '--realm', 'held', '--admin-email', 'h@example.com'],
        { env: dep.env({ PROUDAUTH_SERVER_PUBLIC_ORIGIN: ORIGIN }), input: 'never-read-password-1\n' },
      );
      assert.notEqual(held.code, 0);
      assert.match(held.stderr, /is in use by another ProudAuth process \(pid \d+\)/);
      assert.doesNotMatch(held.stderr, /Password/);
    } finally {
      rmSync(lock, { force: true });
    }
  });

  test(
    'case=every command takes --config, and flags are written with two dashes in errors',
    LIMIT,
    async () => {
      const file = join(dep.dataDir, 'empty.yaml');
      writeFileSync(file, '{}\n');
      const key = await cli(['generate-root-key', '--config', file]);
      assert.equal(key.code, 0, key.stderr);
      const doctor = await cli(['doctor', '--config', file]);
      assert.equal(doctor.code, 0, doctor.stderr);
      const unknown = await cli(['doctor', '-bogus']);
      assert.equal(unknown.code, 2);
      assert.match(unknown.stderr, /unknown flag --bogus/);
      const usage = await run('identity-cli', ['help'], { env: childEnv({}) });
      assert.match(usage.stderr, /every command takes --config FILE/);
      // The help writes every flag with two dashes.
      assert.doesNotMatch(usage.stderr, /(^|\s)\[?-[a-z]/m);
    },
  );

  test('case=doctor prints fingerprints of the key hierarchy and no key material', LIMIT, async () => {
    const pepper = newRootKey();
    const r = await cli(['doctor'], {
      env: { PROUDAUTH_KEYS_PEPPER_1: pepper, PROUDAUTH_KEYS_PEPPER_ACTIVE_VERSION: '1' },
    });
    assert.equal(r.code, 0, r.stderr);
    const report = json(r);
    assert.equal(report.ok, true);
    assert.equal(report.database, dep.kind);
    assert.equal(report.key_provider, 'software');
    const roots = report.root_keys as { version: number; fingerprint: string; active: boolean }[];
    assert.equal(roots.length, 1);
    assert.equal(roots[0]?.version, 1);
    assert.equal(roots[0]?.active, true);
    assert.match(roots[0]?.fingerprint ?? '', /^[0-9a-f]{16}$/);
    const peppers = report.pepper_keys as { version: number; fingerprint: string }[];
    assert.equal(peppers.length, 1);
    assert.notEqual(peppers[0]?.fingerprint, roots[0]?.fingerprint);
    assert.deepEqual(report.missing_root_versions, []);
    assert.ok(Number((report.signing_keys_by_root_version as Record<string, number>)['1']) >= 1);
    for (const form of [...keyForms(dep.rootKey), ...keyForms(pepper)]) {
      assert.equal(r.stdout.includes(form) || r.stderr.includes(form), false, 'a key was printed');
    }
  });

  test(
    'case=doctor exits 1 while a signing key needs a root key version that is not configured',
    LIMIT,
    async () => {
      // Another host already moved to root key version 2 and created a realm with it.
      const v2 = { PROUDAUTH_KEYS_ROOT_2: newRootKey(), PROUDAUTH_KEYS_ACTIVE_VERSION: '2' };
      const created = await cli(['realm', 'create', 'newer'], { env: v2 });
      assert.equal(created.code, 0, created.stderr);

      const r = await cli(['doctor']);
      assert.equal(r.code, 1);
      const report = json(r);
      assert.equal(report.ok, false);
      assert.deepEqual(report.missing_root_versions, [2]);
      assert.equal((report.signing_keys_by_root_version as Record<string, number>)['2'], 1);

      // Adding version 2 on this host too (version 1 stays active) settles it.
      const fixed = await cli(['doctor'], { env: { PROUDAUTH_KEYS_ROOT_2: v2.PROUDAUTH_KEYS_ROOT_2 } });
      assert.equal(fixed.code, 0, fixed.stderr);
      assert.equal(json(fixed).ok, true);
    },
  );

  test('case=an unknown setting in the configuration file exits 2 naming it', LIMIT, async () => {
    const file = join(dep.dataDir, 'proudauth.yaml');
    writeFileSync(file, 'server:\n  bogus: 1\n');
    const [viaEnv, viaFlag, server] = await Promise.all([
      cli(['realm', 'create', 'never'], { env: { PROUDAUTH_CONFIG: file } }),
      cli(['doctor', '--config', file]),
      run('proudauth', ['migrate'], { env: dep.env({ PROUDAUTH_CONFIG: file }) }),
    ]);
    for (const r of [viaEnv, viaFlag, server]) {
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /server\.bogus\b.*unknown setting/);
      assert.equal(r.stdout, '');
    }
  });

  test(
    'case=an unknown command prints the usage and exits 2 (both entry points as processes)',
    LIMIT,
    async () => {
      const [a, b] = await Promise.all([
        runProcess('identity-cli', ['frobnicate'], { env: childEnv({}) }),
        runProcess('proudauth', ['frobnicate'], { env: childEnv({}) }),
      ]);
      assert.equal(a.code, 2);
      assert.match(a.stderr, /^usage: identity-cli/);
      assert.equal(b.code, 2);
      assert.match(b.stderr, /^usage: proudauth/);
    },
  );
});
