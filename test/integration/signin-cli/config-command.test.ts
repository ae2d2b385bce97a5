// identity-cli config validate|import and the policy commands as an operator runs them: real child
// processes with the sign-in `identity-cli login` stored, against a running server, so policy
// changes go through the settings API and nothing needs the server stopped.
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { exportConfiguration } from '../../../src/configuration/config-export.ts';
import { JobRunner } from '../../../src/jobs/index.ts';
import { JOB_TYPES } from '../../../src/main/worker/tasks.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import { findRealmByName } from '../../../src/realms/index.ts';
import { loggedIn, parse, tempDir } from '../../harness/cli-operator-kit.ts';
import { ORDERS, sampleDocument } from '../../harness/config-kit.ts';
import { startHarness, uniqueRealmName } from '../../harness/harness.ts';
import { childEnv, run } from '../cli/cli-process.ts';

const LIMIT = { timeout: 180_000 };

describe('identity-cli config and policy commands', () => {
  test('case=config validate prints the plan; errors exit 1; import applies it', LIMIT, async (t) => {
    const op = await loggedIn(t);
    const dir = dirname(op.file);
    const good = join(dir, 'realm.json');
    writeFileSync(good, JSON.stringify(sampleDocument()));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify(sampleDocument({ format: 'nope' })));

    const valid = await op.cli(['config', 'validate', good]);
    assert.equal(valid.code, 0, valid.stderr);
    assert.match(valid.stdout, /validation only, nothing applied/);
    assert.match(valid.stdout, /resources: create 1, update 0, unchanged 0/);
    assert.ok(valid.stdout.includes(`  + ${ORDERS}`));
    assert.match(valid.stdout, /policy: update \(current revision 1; sections data_access, mfa\)/);

    const invalid = await op.cli(['config', 'validate', bad]);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stdout, /errors \(1\):\n {2}\/format: unsupported_format/);

    const refused = await op.cli(['config', 'import', bad]);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /HTTP 422 validation_failed/);

    const dry = await op.cli(['config', 'import', good, '-dry-run', '-json']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.equal(parse(dry).applied, false);

    const imported = await op.cli(['config', 'import', good]);
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(imported.stdout, /: applied/);
    const again = await op.cli(['config', 'import', good, '-reconcile']);
    assert.equal(again.code, 0, again.stderr);
    assert.match(again.stdout, /resources: create 0, update 0, unchanged 1/);

    // An export names no expected revision; the flag supplies one for the import.
    const realm = await findRealmByName(op.h.ctx.db, op.realm);
    assert.ok(realm);
    const exported = await exportConfiguration(op.h.ctx.db, {
      realm,
      publicOrigin: op.h.ctx.config.server.publicOrigin,
    });
    const file = join(dir, 'export.json');
    writeFileSync(
      file,
      JSON.stringify({ ...exported, policy: { ...exported.policy, audit: { retention_days: 90 } } }),
    );
    const needsRevision = await op.cli(['config', 'import', file]);
    assert.equal(needsRevision.code, 1);
    assert.match(needsRevision.stdout, /\/expected_policy_revision: required/);
    const withRevision = await op.cli(['config', 'import', file, '-expected-policy-revision', '2']);
    assert.equal(withRevision.code, 0, withRevision.stdout + withRevision.stderr);
  });

  test('case=policy commands go through the settings API of the running server', LIMIT, async (t) => {
    const op = await loggedIn(t);
    const set = await op.cli(['realm', 'set-login-ui', op.realm, 'https://login.example.com/signin']);
    assert.equal(set.code, 0, set.stderr);
    assert.deepEqual(parse(set), {
      realm: op.realm,
      policy_revision: 2,
      login_ui_url: 'https://login.example.com/signin',
    });
    assert.match(set.stderr, /settings API/);
    const audit = await op.h.ctx.db.query<{ actor_id: string; reason: string }>(
      `select a.actor_id, a.reason from audit_events a join realms r on r.id = a.realm_id
        where r.name = $1 and a.type = 'realm.policy.updated'`,
      [op.realm],
    );
    assert.equal(audit.rows[0]?.reason, 'settings API');
    assert.equal(audit.rows[0]?.actor_id, op.entry().user.id);

    const policy = await op.cli([
      'realm',
      'set-policy',
      op.realm,
      '-data',
      '{"mfa":{"requirement":"required"}}',
    ]);
    assert.equal(policy.code, 0, policy.stderr);
    assert.deepEqual(parse(policy), { realm: op.realm, policy_revision: 3, changed: true, via: 'api' });
    const refused = await op.cli(['realm', 'set-policy', op.realm, '-data', '{"login":{"password":false}}']);
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /HTTP 422 validation_failed.*\n\s+policy\.login: no_sign_in_method/s);
    const stale = await op.cli([
      'realm',
      'set-policy',
      op.realm,
      '-data',
      '{"audit":{"retention_days":60}}',
      '-expected-revision',
      '1',
    ]);
    assert.equal(stale.code, 2);
    assert.match(stale.stderr, /HTTP 412 precondition_failed/);
  });

  test('case=without a sign-in, a running server is not bypassed', LIMIT, async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm(uniqueRealmName());
    const env = childEnv({ PROUDAUTH_CREDENTIALS: join(tempDir(t), 'none.json') });
    const r = await run(
      'identity-cli',
      ['realm', 'set-login-ui', realm.name, 'https://ui.example.com/', '-server', h.publicUrl],
      { env },
    );
    assert.equal(r.code, 2);
    assert.match(r.stderr, /a server answers at .*identity-cli login/);
    const rows = await h.ctx.db.query('select 1 from realm_policy_revisions where realm_id = $1', [realm.id]);
    assert.equal(rows.rowCount, 1);
  });
  test(
    'case=config export waits for the export job and writes the document validate accepts',
    LIMIT,
    async (t) => {
      const op = await loggedIn(t);
      const dir = dirname(op.file);
      const seeded = join(dir, 'realm.json');
      writeFileSync(seeded, JSON.stringify(sampleDocument()));
      assert.equal((await op.cli(['config', 'import', seeded])).code, 0);

      // The worker's part, played by this process while the command polls.
      const runner = new JobRunner(workerDeps(op.h.ctx), JOB_TYPES, { holder: 'cli-test-worker' });
      let stop = false;
      const working = (async () => {
        while (!stop) if ((await runner.runNext()) === null) await sleep(100);
      })();
      t.after(async () => {
        stop = true;
        await working;
      });

      const out = join(dir, 'exported.json');
      const exported = await op.cli(['config', 'export', '--out', out]);
      assert.equal(exported.code, 0, exported.stderr);
      assert.match(exported.stderr, /written to/);
      const document = JSON.parse(readFileSync(out, 'utf8'));
      assert.equal(document.format, 'service.realm-config.v1');
      assert.ok(document.resources.some((r: { audience: string }) => r.audience === ORDERS));
      const valid = await op.cli(['config', 'validate', out]);
      assert.equal(valid.code, 0, valid.stdout + valid.stderr);
    },
  );
});
