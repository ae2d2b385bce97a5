// identity-cli revocation-log, restore-begin and restore-reconcile as an operator runs them
// (document 2, "Command-line operator tools"): real child processes on a deployment of their own.
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { json, run, scratchDeployment } from './cli-process.ts';

test('revocation-log appends 0600 JSON lines and audits; restore-begin marks, reconcile clears', {
  timeout: 540_000,
}, async (t) => {
  const dep = await scratchDeployment();
  t.after(() => dep.cleanup());
  const env = dep.env();
  const migrated = await run('proudauth', ['migrate'], { env, timeoutMs: 180_000 });
  assert.equal(migrated.code, 0, migrated.stderr);
  const cli = (args: string[]) => run('identity-cli', args, { env, timeoutMs: 120_000 });
  await dep.withDb(async (db) => {
    await db.query(
      `insert into token_revocations (realm_id, jti, reason, expires_at, created_at)
       values ('rlm_shop', 'jti-after-backup', 'revoked', now() + interval '1 hour', now())`,
    );
  });
  const out = join(dep.dataDir, 'revocations.jsonl');
  // The spec's single-dash spelling.
  const first = await cli(['revocation-log', '-out', out]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(json(first).records, 1);
  assert.equal(statSync(out).mode & 0o777, 0o600);
  const since = new Date(Date.now() - 3_600_000).toISOString();
  assert.equal((await cli(['revocation-log', '--since', since, '--out', out])).code, 0);
  const lines = readFileSync(out, 'utf8').trimEnd().split('\n');
  assert.equal(lines.length, 2, 'appended, the duplicate included');
  const line = JSON.parse(lines[0] as string);
  assert.equal(line.kind, 'revocation');
  assert.equal(line.record.jti, 'jti-after-backup');

  const begun = await cli(['restore-begin']);
  assert.equal(begun.code, 0, begun.stderr);
  assert.equal(json(begun).marked, true);
  const bad = join(dep.dataDir, 'bad.jsonl');
  writeFileSync(bad, `${lines[0]}\n{"seq":`);
  const refused = await cli(['restore-reconcile', '--log', bad]);
  assert.equal(refused.code, 2);
  assert.match(refused.stderr, /line 2/);
  assert.equal(json(await cli(['restore-begin', '-status'])).marked, true, 'nothing changed');

  await dep.withDb(async (db) => {
    await db.query(`delete from token_revocations where jti = 'jti-after-backup'`);
  });
  const done = await cli(['restore-reconcile', '-log', out]);
  assert.equal(done.code, 0, done.stderr);
  const report = json(done) as { applied: Record<string, number>; restore_marker_cleared: boolean };
  assert.equal(report.applied.revocation, 1);
  assert.equal(report.restore_marker_cleared, true);
  await dep.withDb(async (db) => {
    const r = await db.query(`select 1 from token_revocations where jti = 'jti-after-backup'`);
    assert.equal(r.rows.length, 1, 'the revocation is back');
    const types = await db.query<{ type: string }>(
      `select type from audit_events where type like 'operations.%' order by occurred_at, id`,
    );
    assert.deepEqual(
      types.rows.map((r) => r.type),
      [
        'operations.revocation_log.exported',
        'operations.revocation_log.exported',
        'operations.restore.begun',
        'operations.restore.reconciled',
      ],
    );
  });
});
