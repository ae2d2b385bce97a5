// The jobs machinery (spec doc 2, Jobs and exports; Job; Export retention): runs under leases,
// re-checks of the requester, results sealed and downloaded once per token, purge.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from 'node:test';
import type { JobRunnerDeps, JobType } from '../../../src/jobs/index.ts';
import { purgeJobResults } from '../../../src/jobs/index.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { holdOpen, untilLockWaiters } from '../../harness/held-transaction.ts';
import { RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';
import { auditRows, type Body, body, HOUR, setup } from '../organizations/org-test-kit.ts';
import { dropRealmRoles, fileJob, jobRow, queue, runner } from './jobs-kit.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

describe('jobs › running and downloading', () => {
  test('case=a job runs, its result is sealed, downloaded once with the spec content type, and audited', async (t) => {
    const s = await setup(t);
    const type = fileJob('config.export', 'realm.configuration.export', 'json');
    const id = await queue(s, type, s.admin.userId, { params: { section: 'all' } });
    assert.match(id, /^job_[0-9a-z]{26}$/);
    const queued: Body = await body(await s.admin.call('GET', `/jobs/${id}`));
    assert.equal(queued.state, 'queued');

    assert.equal(await runner(s, [type]).runNext(), 'succeeded');
    assert.deepEqual(type.runs, [id]);
    const expected = JSON.stringify({ job: id, params: { section: 'all' } });
    const row = await jobRow(s, id);
    assert.ok(!String(row.result_sealed).includes(id), 'the stored result is sealed');
    const done: Body = await body(await s.admin.call('GET', `/jobs/${id}`));
    assert.equal(done.state, 'succeeded');
    assert.equal(done.result.sha256, sha256(expected));
    assert.equal(done.result.content_type, 'application/json');
    assert.deepEqual(done.result.counts, { records: 2 });
    assert.deepEqual(done.progress, { section: 'everything', records: 2 });
    assert.equal(done.last_error, null);

    const issued = await s.admin.call('POST', `/jobs/${id}/downloads`);
    assert.equal(issued.status, 201);
    const grant: Body = await body(issued);
    assert.match(grant.download_token, /^pa_dl_[A-Za-z0-9_-]{43}$/);
    assert.equal(grant.expires_in, 300);
    const stored = await s.h.ctx.db.query<{ token_digest: string }>(
      'select token_digest from job_download_tokens where realm_id = $1',
      [s.realm.id],
    );
    assert.equal(stored.rows[0]?.token_digest, sha256(grant.download_token), 'only the digest is stored');

    const file = await s.admin.call('POST', '/job-downloads', { download_token: grant.download_token });
    assert.equal(file.status, 200);
    assert.equal(file.headers.get('content-type'), 'application/json');
    assert.equal(file.headers.get('content-disposition'), 'attachment; filename="export.json"');
    assert.equal(await file.text(), expected);
    const [audit] = await auditRows(s, 'job.result.downloaded');
    assert.equal(audit?.category, 'privacy');
    assert.equal(audit?.actor_id, s.admin.userId);
    assert.equal(audit?.target_id, id);

    const again = await s.admin.call('POST', '/job-downloads', { download_token: grant.download_token });
    assert.equal(again.status, 400, 'a token is single use');
    assert.equal((await auditRows(s, 'job.result.downloaded')).length, 1);
    // Tokens can be issued again while the result is kept.
    const second: Body = await body(await s.admin.call('POST', `/jobs/${id}/downloads`));
    assert.notEqual(second.download_token, grant.download_token);
    const refetch = await s.admin.call('POST', '/job-downloads', { download_token: second.download_token });
    assert.equal(await refetch.text(), expected);
  });

  test('case=NDJSON results are served as application/x-ndjson export.ndjson', async (t) => {
    const s = await setup(t);
    const type = fileJob('audit.export', 'realm.audit.export', 'ndjson');
    const id = await queue(s, type, s.admin.userId);
    assert.equal(await runner(s, [type]).runNext(), 'succeeded');
    const grant: Body = await body(await s.admin.call('POST', `/jobs/${id}/downloads`));
    const file = await s.admin.call('POST', '/job-downloads', { download_token: grant.download_token });
    assert.equal(file.headers.get('content-type'), 'application/x-ndjson');
    assert.equal(file.headers.get('content-disposition'), 'attachment; filename="export.ndjson"');
    assert.equal(await file.text(), '{"n":1}\n{"n":2}\n');
  });

  test('case=a token expires after five minutes', async (t) => {
    const s = await setup(t);
    const type = fileJob('config.export', 'realm.configuration.export', 'json');
    const id = await queue(s, type, s.admin.userId);
    await runner(s, [type]).runNext();
    const grant: Body = await body(await s.admin.call('POST', `/jobs/${id}/downloads`));
    s.h.clock.advance(300_000);
    const late = await s.admin.call('POST', '/job-downloads', { download_token: grant.download_token });
    assert.equal(late.status, 400);
    assert.equal((await body(late)).code, 'invalid_request');
    assert.equal((await auditRows(s, 'job.result.downloaded')).length, 0);
  });

  test('case=only the requester gets and redeems tokens; others see 403 or 404 and use nothing up', async (t) => {
    const s = await setup(t);
    const type = fileJob('config.export', 'realm.configuration.export', 'json');
    const id = await queue(s, type, s.admin.userId);
    await runner(s, [type]).runNext();
    const otherAdmin = await apiCaller(s.h, s.realm);
    const stranger = await apiCaller(s.h, s.realm, { roles: [] });

    assert.equal((await otherAdmin.call('GET', `/jobs/${id}`)).status, 200, 'realm.jobs.read sees every job');
    assert.equal((await stranger.call('GET', `/jobs/${id}`)).status, 404);
    const refused = await otherAdmin.call('POST', `/jobs/${id}/downloads`);
    assert.equal(refused.status, 403);
    assert.equal((await stranger.call('POST', `/jobs/${id}/downloads`)).status, 404);

    const grant: Body = await body(await s.admin.call('POST', `/jobs/${id}/downloads`));
    const stolen = await otherAdmin.call('POST', '/job-downloads', { download_token: grant.download_token });
    assert.equal(stolen.status, 403);
    const mine = await s.admin.call('POST', '/job-downloads', { download_token: grant.download_token });
    assert.equal(mine.status, 200, 'the refusal did not use the token up');
  });

  test('case=the permission is re-checked at issue and at redemption; a 403 leaves the token usable', async (t) => {
    const s = await setup(t);
    const requester = await apiCaller(s.h, s.realm);
    const type = fileJob('config.export', 'realm.configuration.export', 'json');
    const id = await queue(s, type, requester.userId);
    await runner(s, [type]).runNext();
    const grant: Body = await body(await requester.call('POST', `/jobs/${id}/downloads`));

    await dropRealmRoles(s, requester.userId);
    const redeem = () => requester.call('POST', '/job-downloads', { download_token: grant.download_token });
    const refused = await redeem();
    assert.equal(refused.status, 403);
    assert.match((await body(refused)).detail, /realm\.configuration\.export/);
    const issue = await requester.call('POST', `/jobs/${id}/downloads`);
    assert.equal(issue.status, 403);

    const admin = await s.h.ctx.db.query<{ id: string }>(
      `select id from roles where realm_id = $1 and name = 'realm-admin' and organization_id is null`,
      [s.realm.id],
    );
    await s.h.ctx.db.query(
      `insert into role_assignments (realm_id, id, role_id, subject_type, subject_id, scope_type, scope_id, source)
       values ($1, 'ras_again', $2, 'user', $3, 'realm', '', 'test')`,
      [s.realm.id, admin.rows[0]?.id, requester.userId],
    );
    assert.equal((await redeem()).status, 200, 'the token survived the refusal');
  });

  test('case=results are purged after privacy.export_retention; the record stays, tokens stop', async (t) => {
    const s = await setup(t);
    const type = fileJob('config.export', 'realm.configuration.export', 'json');
    const id = await queue(s, type, s.admin.userId);
    await runner(s, [type]).runNext();
    const grant: Body = await body(await s.admin.call('POST', `/jobs/${id}/downloads`));

    s.h.clock.advance(24 * HOUR - 1000);
    const deps = { db: s.h.ctx.db };
    await purgeJobResults(deps, s.h.clock.now());
    assert.notEqual((await jobRow(s, id)).result_sealed, null, 'kept until the retention ends');

    s.h.clock.advance(1000);
    const report = await purgeJobResults(deps, s.h.clock.now());
    // A day later the administrator signs in again.
    const admin = await apiCaller(s.h, s.realm, { userId: s.admin.userId, roles: [] });
    assert.ok((report.results_purged ?? 0) >= 1);
    assert.equal((await jobRow(s, id)).result_sealed, null);
    const view: Body = await body(await admin.call('GET', `/jobs/${id}`));
    assert.equal(view.state, 'succeeded');
    assert.equal(typeof view.result.sha256, 'string', 'the non-secret metadata stays');
    assert.equal(view.result_available_until, null);
    assert.equal((await admin.call('POST', `/jobs/${id}/downloads`)).status, 409);
    // The token issued before the purge expired long ago; a fresh one cannot be had.
    const late = await admin.call('POST', '/job-downloads', { download_token: grant.download_token });
    assert.equal(late.status, 400);
  });
});

describe('jobs › the runner', () => {
  test('case=a requester who lost the permission dead-letters the job without running it', async (t) => {
    const s = await setup(t);
    const requester = await apiCaller(s.h, s.realm);
    const type = fileJob('config.export', 'realm.configuration.export', 'json');
    const id = await queue(s, type, requester.userId);
    await dropRealmRoles(s, requester.userId);
    assert.equal(await runner(s, [type]).runNext(), 'dead_letter');
    assert.deepEqual(type.runs, [], 'nothing ran');
    const row = await jobRow(s, id);
    assert.equal(row.state, 'dead_letter');
    assert.match(row.last_error, /permanent failure.*realm\.configuration\.export/);
  });

  test('case=an inactive requester dead-letters the job', async (t) => {
    const s = await setup(t);
    const requester = await apiCaller(s.h, s.realm);
    // Even a job that needs no permission (a personal data export) stops.
    const type = fileJob('config.export', null, 'json');
    const id = await queue(s, type, requester.userId);
    await s.h.ctx.db.query(`update users set state = 'suspended' where realm_id = $1 and id = $2`, [
      s.realm.id,
      requester.userId,
    ]);
    assert.equal(await runner(s, [type]).runNext(), 'dead_letter');
    assert.match((await jobRow(s, id)).last_error, /no longer active/);
  });

  test('case=a crashed worker’s job is taken over once its lease runs out', async (t) => {
    const s = await setup(t);
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let started: () => void = () => {};
    const running = new Promise<void>((r) => {
      started = r;
    });
    const runs: string[] = [];
    const stuck: JobType<JobRunnerDeps> = {
      name: 'config.export',
      permission: 'realm.configuration.export',
      async run(_d, job) {
        runs.push('a');
        started();
        await gate;
        return { kind: 'file', format: 'json', body: `"from a ${job.id}"` };
      },
    };
    const fine = fileJob('config.export', 'realm.configuration.export', 'json', runs);
    const id = await queue(s, stuck, s.admin.userId);

    const a = runner(s, [stuck], 'worker-a').runNext();
    await running;
    const b = runner(s, [fine], 'worker-b');
    assert.equal(await b.runNext(), null, 'the lease is held, so the job is not claimed twice');
    s.h.clock.advance(5 * 60_000);
    assert.equal(await b.runNext(), 'succeeded', 'the expired lease is taken over');
    release();
    assert.equal(await a, 'lease_lost', 'the first worker commits nothing');
    const row = await jobRow(s, id);
    assert.equal(row.state, 'succeeded');
    assert.equal(row.attempts, 2);
    assert.equal(row.locked_by, null);
    const grant: Body = await body(await s.admin.call('POST', `/jobs/${id}/downloads`));
    const file = await s.admin.call('POST', '/job-downloads', { download_token: grant.download_token });
    assert.equal(await file.text(), JSON.stringify({ job: id, params: {} }), 'the taking worker’s result');
  });

  test('case=two workers racing never run one job twice', { skip: RACE_NEEDS_POSTGRES }, async (t) => {
    const s = await setup(t);
    const runs: string[] = [];
    const type = fileJob('config.export', 'realm.configuration.export', 'json', runs);
    const ids = new Set<string>();
    for (let i = 0; i < 6; i++) ids.add(await queue(s, type, s.admin.userId));
    const a = runner(s, [type], 'worker-a');
    const b = runner(s, [type], 'worker-b');
    const reports = await Promise.all([a.runDue(10), b.runDue(10), a.runDue(10), b.runDue(10)]);
    assert.equal(runs.length, 6, 'each job ran once');
    assert.deepEqual(new Set(runs), ids);
    const succeeded = reports.reduce((n, r) => n + (r.succeeded ?? 0), 0);
    assert.equal(succeeded, 6);
  });

  test('case=concurrent redemptions of one download token serve the file once', {
    skip: RACE_NEEDS_POSTGRES,
  }, async (t) => {
    const s = await setup(t);
    const type = fileJob('config.export', 'realm.configuration.export', 'json');
    const id = await queue(s, type, s.admin.userId);
    assert.equal(await runner(s, [type]).runNext(), 'succeeded');
    const grant: Body = await body(await s.admin.call('POST', `/jobs/${id}/downloads`));
    const db = s.h.ctx.db;
    // Every redemption reads the token while this transaction holds its row, so all of them are
    // under way, each waiting for a lock, before any can use the token up.
    const held = await holdOpen(db, (tx) =>
      tx.query('select 1 from job_download_tokens where realm_id = $1 and token_digest = $2 for update', [
        s.realm.id,
        sha256(grant.download_token),
      ]),
    );
    const redemptions = [1, 2, 3].map(() =>
      s.admin.call('POST', '/job-downloads', { download_token: grant.download_token }),
    );
    await untilLockWaiters(db, 3);
    await held.commit();
    const statuses = (await Promise.all(redemptions)).map((r) => r.status).sort();
    assert.deepEqual(statuses, [200, 400, 400], 'the token is used once');
    assert.equal((await auditRows(s, 'job.result.downloaded')).length, 1);
  });

  test('case=transient failures retry with backoff and dead-letter at the limit; permanent ones fail', async (t) => {
    const s = await setup(t);
    const flaky: JobType<JobRunnerDeps> = {
      name: 'config.export',
      permission: null,
      run: async () => ({ kind: 'failure', permanent: false, message: 'upstream busy' }),
    };
    const id = await queue(s, flaky, s.admin.userId);
    const r = runner(s, [flaky]);
    assert.equal(await r.runNext(), 'retry');
    assert.equal(await r.runNext(), null, 'not before its backoff');
    const ends: string[] = [];
    for (let i = 0; i < 4; i++) {
      s.h.clock.advance(2 * HOUR);
      ends.push(String(await r.runNext()));
    }
    assert.deepEqual(ends, ['retry', 'retry', 'retry', 'dead_letter']);
    const row = await jobRow(s, id);
    assert.equal(row.attempts, 5);
    assert.match(row.last_error, /upstream busy/);

    const broken: JobType<JobRunnerDeps> = {
      name: 'audit.export',
      permission: null,
      run: async () => ({ kind: 'failure', permanent: true, message: 'bad input' }),
    };
    const other = await queue(s, broken, s.admin.userId);
    assert.equal(await runner(s, [broken]).runNext(), 'failed');
    assert.equal((await jobRow(s, other)).last_error, 'bad input');
  });

  test('case=at most workers.max_jobs_per_organization jobs of one organization run at once', async (t) => {
    const s = await setup(t);
    const org = await s.admin.call('POST', '/organizations', { slug: 'busy', display_name: 'busy' });
    const orgId: string = (await body(org)).id;
    const type = fileJob('config.export', 'realm.configuration.export', 'json');
    const busy = [
      await queue(s, type, s.admin.userId, { organizationId: orgId }),
      await queue(s, type, s.admin.userId, { organizationId: orgId }),
    ];
    // Two runs of the organization hold live leases (workers elsewhere).
    await s.h.ctx.db.query(
      `update jobs set state = 'running', locked_by = 'elsewhere', locked_until = $3
        where realm_id = $1 and id = any ($2::text[])`,
      [s.realm.id, busy, new Date(s.h.clock.now().getTime() + 60_000)],
    );
    const third = await queue(s, type, s.admin.userId, { organizationId: orgId });
    const r = runner(s, [type]);
    assert.equal(await r.runNext(), null, 'the third job of the organization waits');
    const realmWide = await queue(s, type, s.admin.userId);
    assert.equal(await r.runNext(), 'succeeded');
    assert.deepEqual(type.runs, [realmWide], 'other work is not held up');
    await s.h.ctx.db.query(`update jobs set state = 'succeeded' where realm_id = $1 and id = $2`, [
      s.realm.id,
      busy[0],
    ]);
    assert.equal(await r.runNext(), 'succeeded');
    assert.deepEqual(type.runs, [realmWide, third]);
  });

  test('case=a worker that does not know a job type gives it back untouched', async (t) => {
    const s = await setup(t);
    const type = fileJob('config.export', 'realm.configuration.export', 'json');
    const id = await queue(s, type, s.admin.userId);
    assert.equal(await runner(s, []).runNext(), 'released');
    const row = await jobRow(s, id);
    assert.equal(row.state, 'queued');
    assert.equal(row.attempts, 0);
    s.h.clock.advance(60_000);
    assert.equal(await runner(s, [type]).runNext(), 'succeeded');
  });
});
