// Who may import (spec doc 2, Jobs and exports: user.import re-check; Migration adapters rule 1):
// realm.users.import, plus the verification override for trusted verified flags, credentials
// manage for TOTP seeds and update_password/configure_totp, users.write for verify_email, and the
// delegation ceiling of every mapped role; checked at the request and again when the job runs.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { userImportJob } from '../../../src/imports/user-import.job.ts';
import { JobRunner, type JobType } from '../../../src/jobs/index.ts';
import type { WorkerDeps } from '../../../src/main/worker/tasks.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { runJobs } from '../exports/exports-kit.ts';
import { dropRealmRoles, jobRow } from '../jobs/jobs-kit.ts';
import { body, createOrg } from '../organizations/org-test-kit.ts';
import { footprint, importDoc, importSetup, postImport, userRecord } from './import-kit.ts';

describe('user import › authority', () => {
  test('case=the request needs each permission the document calls for and the delegation ceiling of its roles', async (t) => {
    const s = await importSetup(t);
    const org = await createOrg(s);
    const role = await s.admin.call('POST', '/roles', {
      name: 'importer',
      permissions: ['realm.users.import'],
    });
    assert.equal(role.status, 201, await role.clone().text());
    const importer = await apiCaller(s.h, s.realm, { roles: ['importer'] });

    const plain = await postImport(importer, importDoc([userRecord()]), { dryRun: true });
    assert.equal(plain.status, 200, 'realm.users.import alone imports plain records');
    const cases: [Record<string, unknown>, unknown[], string][] = [
      [
        { trust_email_verification: true, verification_reason: 'source realm verified them' },
        [userRecord()],
        'realm.users.verification.override',
      ],
      [
        { import_totp: true },
        [userRecord({ totp: { secret: 'JBSWY3DPEHPK3PXP', encoding: 'base32' } })],
        'realm.users.credentials.manage',
      ],
      [{}, [userRecord({ required_actions: ['configure_totp'] })], 'realm.users.credentials.manage'],
      [{}, [userRecord({ required_actions: ['verify_email'] })], 'realm.users.write'],
      [{}, [userRecord({ memberships: [{ organization_id: org.id, roles: ['admin'] }] })], 'org.'],
    ];
    for (const [extra, users, missing] of cases) {
      for (const dryRun of [true, false]) {
        const res = await postImport(importer, importDoc(users, extra), { dryRun });
        assert.equal(res.status, 403, `${missing} (dry run ${dryRun})`);
        assert.match((await body(res)).detail, new RegExp(missing.replace('.', '\\.')));
      }
    }
    const nobody = await apiCaller(s.h, s.realm, { roles: [] });
    assert.equal((await postImport(nobody, importDoc([userRecord()]))).status, 403);
  });

  test('case=the job re-checks the requester: a lost extra permission or a lost realm.users.import dead-letters it, nothing written', async (t) => {
    const s = await importSetup(t);
    const create = await s.admin.call('POST', '/roles', {
      name: 'totp-importer',
      permissions: ['realm.users.import', 'realm.users.credentials.manage'],
    });
    assert.equal(create.status, 201);
    assert.equal(
      (await s.admin.call('POST', '/roles', { name: 'importer', permissions: ['realm.users.import'] }))
        .status,
      201,
    );
    const importer = await apiCaller(s.h, s.realm, { roles: ['totp-importer'] });
    const doc = importDoc([userRecord({ totp: { secret: 'JBSWY3DPEHPK3PXP', encoding: 'base32' } })], {
      import_totp: true,
    });
    const res = await postImport(importer, doc);
    assert.equal(res.status, 202, await res.clone().text());
    const { job_id } = await body(res);

    // The requester keeps realm.users.import but loses credentials manage before the job runs.
    await dropRealmRoles(s, importer.userId);
    const { assignRoles } = await import('../../harness/api-kit.ts');
    await assignRoles(s.h, s.realm, importer.userId, ['importer']);
    const before = await footprint(s);
    assert.deepEqual(await runJobs(s), { dead_letter: 1 });
    const dead = await jobRow(s, job_id);
    assert.equal(dead.state, 'dead_letter');
    assert.match(dead.last_error, /realm\.users\.credentials\.manage/);
    const jobView = await body(await importer.call('GET', `/jobs/${job_id}`));
    assert.equal(jobView.state, 'dead_letter');
    const after = await footprint(s);
    assert.equal(after.users, before.users);
    assert.equal(after.totp_credentials, before.totp_credentials);

    // Without realm.users.import the runner dead-letters the job before it runs.
    await assignRoles(s.h, s.realm, importer.userId, ['totp-importer']);
    const second = await postImport(importer, importDoc([userRecord()]));
    assert.equal(second.status, 202);
    const secondId = (await body(second)).job_id;
    await dropRealmRoles(s, importer.userId);
    assert.deepEqual(await runJobs(s), { dead_letter: 1 });
    assert.match((await jobRow(s, secondId)).last_error, /realm\.users\.import/);
    assert.equal((await footprint(s)).users, before.users);
  });

  test('case=a permission lost while the job runs dead-letters it before anything is written', async (t) => {
    const s = await importSetup(t);
    const create = await s.admin.call('POST', '/roles', {
      name: 'totp-importer',
      permissions: ['realm.users.import', 'realm.users.credentials.manage'],
    });
    assert.equal(create.status, 201);
    const importer = await apiCaller(s.h, s.realm, { roles: ['totp-importer'] });
    const doc = importDoc([userRecord({ totp: { secret: 'JBSWY3DPEHPK3PXP', encoding: 'base32' } })], {
      import_totp: true,
    });
    const res = await postImport(importer, doc);
    assert.equal(res.status, 202, await res.clone().text());
    const { job_id } = await body(res);
    const before = await footprint(s);
    // The real job type; its role is taken away after its first check passed and before the
    // runner writes its changes.
    const midRun: JobType<WorkerDeps> = {
      ...userImportJob,
      async run(deps, job) {
        const outcome = await userImportJob.run(deps, job);
        assert.equal(outcome.kind, 'apply', 'the first check passes');
        await dropRealmRoles(s, importer.userId);
        return outcome;
      },
    };
    const ends = await new JobRunner<WorkerDeps>(workerDeps(s.h.ctx) as WorkerDeps, [midRun], {
      holder: 'mid-run',
    }).runDue(5);
    assert.deepEqual(ends, { dead_letter: 1 });
    const row = await jobRow(s, job_id);
    assert.equal(row.state, 'dead_letter');
    assert.match(row.last_error, /realm\.users\.(import|credentials\.manage)/);
    const after = await footprint(s);
    for (const table of ['users', 'totp_credentials', 'user_external_ids', 'password_credentials'])
      assert.equal(after[table], before[table], table);
  });
});
