// The worker half of organization deletion (spec doc 2, Organization deletion; Job): the job the
// DELETE queued runs in the worker, removes what the organization held, tombstones it, and
// dead-letters when its requester no longer holds org.delete.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { JOB_TYPES, TASKS } from '../../../src/main/worker/tasks.ts';
import { startWorker } from '../../../src/main/worker/worker.ts';
import { newId } from '../../../src/platform/ids.ts';
import { findRoleByName } from '../../../src/roles/builtin-roles.repo.ts';
import { seedOrgRole } from '../../harness/org-kit.ts';
import { count, rows } from '../../harness/signin-kit.ts';
import { seedServiceClient } from '../../harness/token-kit.ts';
import {
  auditRows,
  type Body,
  body,
  createOrg,
  newUser,
  type OrgSetup,
  orgCaller,
  outbox,
  setup,
} from '../organizations/org-test-kit.ts';
import { fileJob, jobRow, queue, runner } from './jobs-kit.ts';

const orgRows = (s: OrgSetup, sql: string, orgId: string) => count(s.h, sql, [s.realm.id, orgId]);

/** An organization with a member holding a role, a group with members, a domain and an owned client. */
async function populatedOrg(s: OrgSetup) {
  const org = await createOrg(s);
  const member = await newUser(s);
  const memberRole = await findRoleByName(s.h.ctx.db, s.realm.id, 'member');
  const added = await s.admin.call('POST', `/organizations/${org.id}/members`, {
    user_id: member,
    role_ids: [memberRole?.id],
  });
  assert.equal(added.status, 201, await added.clone().text());
  assert.equal(
    (await s.admin.call('POST', `/organizations/${org.id}/domains`, { domain: 'gone.example' })).status,
    201,
  );
  const now = s.h.clock.now();
  const groupId = newId('grp', now.getTime());
  await s.h.ctx.db.query(
    `insert into groups (realm_id, id, organization_id, depth, name, created_at, updated_at)
     values ($1, $2, $3, 1, 'team', $4, $4)`,
    [s.realm.id, groupId, org.id, now],
  );
  await s.h.ctx.db.query(
    `insert into group_members (realm_id, group_id, subject_type, subject_id, created_at) values ($1, $2, 'user', $3, $4)`,
    [s.realm.id, groupId, member, now],
  );
  const owned = await seedServiceClient(s.h, s.realm, `svc-${Math.random().toString(36).slice(2, 8)}`);
  await s.h.ctx.db.query(
    'update service_principals set owner_organization_id = $3 where realm_id = $1 and id = $2',
    [s.realm.id, owned.principalId, org.id],
  );
  const provider = await s.admin.call('POST', `/organizations/${org.id}/identity-providers`, {
    alias: `idp-${org.id.slice(-6)}`,
    display_name: 'Their IdP',
    issuer: 'https://idp.gone.example',
    config: { client_id: 'x' },
    client_secret: 'their-provider-secret',
  });
  assert.equal(provider.status, 201, await provider.clone().text());
  return { org, member, groupId, clientRowId: owned.client.id };
}

describe('organization deletion › the worker half', () => {
  test('case=the queued job runs in the worker: everything listed goes, the tombstone stays, evidence is written', async (t) => {
    const s = await setup(t);
    const { org, member, clientRowId } = await populatedOrg(s);
    const headers = { 'idempotency-key': 'delete-once-1' };
    const res = await s.admin.call('DELETE', `/organizations/${org.id}`, undefined, headers);
    assert.equal(res.status, 202);
    const started: Body = await body(res);
    const replay = await s.admin.call('DELETE', `/organizations/${org.id}`, undefined, headers);
    assert.equal(replay.status, 202, 'a retry with the same key answers the same job');
    assert.deepEqual(await body(replay), started);
    assert.equal((await s.admin.call('DELETE', `/organizations/${org.id}`)).status, 409, 'queued: 409');
    const [provider] = await rows(
      s.h,
      'select * from identity_providers where realm_id = $1 and organization_id = $2',
      [s.realm.id, org.id],
    );
    assert.equal(provider?.state, 'disabled', 'the request disables its identity providers at once');
    assert.ok(provider?.client_secret_sealed, 'their secrets go with the worker');

    // The real worker wiring: its jobs.run task over the registered job types.
    const worker = startWorker(s.h.ctx, { autostart: false });
    t.after(() => worker.stop());
    const jobsTask = TASKS.find((x) => x.name === 'jobs.run');
    assert.ok(jobsTask);
    assert.deepEqual(await worker.scheduler.runOnce(jobsTask), { succeeded: 1 });

    const job: Body = await body(await s.admin.call('GET', `/jobs/${started.job_id}`));
    assert.equal(job.state, 'succeeded');
    assert.equal(job.type, 'organization.delete');
    assert.equal(job.result.counts.memberships_removed, 2, 'the member and the owner who created it');
    const [tomb] = await rows(s.h, 'select * from organizations where realm_id = $1 and id = $2', [
      s.realm.id,
      org.id,
    ]);
    assert.equal(tomb?.state, 'deleted');
    assert.deepEqual(tomb?.metadata, {});
    assert.equal((await s.admin.call('GET', `/organizations/${org.id}`)).status, 404);

    assert.equal(
      await orgRows(
        s,
        `select 1 from memberships where realm_id = $1 and organization_id = $2 and state <> 'removed'`,
        org.id,
      ),
      0,
    );
    const [m] = await rows(s.h, 'select * from memberships where realm_id = $1 and user_id = $2', [
      s.realm.id,
      member,
    ]);
    assert.equal(m?.ended_reason, 'organization_deleted');
    assert.equal(
      await orgRows(
        s,
        `select 1 from role_assignments where realm_id = $1 and scope_type = 'organization' and scope_id = $2`,
        org.id,
      ),
      0,
    );
    assert.equal(
      await orgRows(
        s,
        'select 1 from group_members gm join groups g on g.realm_id = gm.realm_id and g.id = gm.group_id where gm.realm_id = $1 and g.organization_id = $2',
        org.id,
      ),
      0,
    );
    assert.equal(
      await orgRows(
        s,
        'select 1 from organization_domains where realm_id = $1 and organization_id = $2',
        org.id,
      ),
      0,
    );
    assert.equal(
      await count(
        s.h,
        'select 1 from client_secrets where realm_id = $1 and client_row_id = $2 and revoked_at is null',
        [s.realm.id, clientRowId],
      ),
      0,
      "the owned client's credentials are revoked",
    );
    const [erased] = await rows(
      s.h,
      'select * from identity_providers where realm_id = $1 and organization_id = $2',
      [s.realm.id, org.id],
    );
    assert.equal(erased?.client_secret_sealed, null, 'provider secrets are erased');
    assert.equal(job.result.counts.provider_secrets_erased, 1);
    const other = await createOrg(s);
    assert.equal(
      (await s.admin.call('POST', `/organizations/${other.id}/domains`, { domain: 'gone.example' })).status,
      201,
      'the domain is free again',
    );

    // Completion is audit evidence only: the catalog's organization.deleted marks the start.
    assert.equal((await outbox(s, 'organization.deletion.completed')).length, 0);
    const [audit] = await auditRows(s, 'organization.deletion.completed');
    assert.equal(audit?.org_id, org.id);
    assert.equal(audit?.data.job_id, started.job_id);
    assert.equal(audit?.data.memberships_removed, 2);
  });

  test('case=an organization owner’s deletion runs on the owner role held inside the organization', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const owner = await orgCaller(s, org.id, 'owner');
    const res = await owner.call('DELETE', `/organizations/${org.id}`);
    assert.equal(res.status, 202);
    const { job_id } = await body(res);
    assert.equal(await runner(s, JOB_TYPES).runNext(), 'succeeded');
    assert.equal((await jobRow(s, job_id)).state, 'succeeded');
  });

  test('case=a requester who lost org.delete dead-letters the job; the organization stays deleting until a new DELETE', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const owner = await orgCaller(s, org.id, 'owner');
    const { job_id } = await body(await owner.call('DELETE', `/organizations/${org.id}`));
    await s.h.ctx.db.query(
      `delete from role_assignments where realm_id = $1 and subject_id = $2 and scope_type = 'organization'`,
      [s.realm.id, owner.userId],
    );
    // A member role leaves the owner in the organization, without org.delete.
    await seedOrgRole(s.h, s.realm, org.id, { type: 'user', id: owner.userId }, 'admin');
    const worker = startWorker(s.h.ctx, { autostart: false });
    t.after(() => worker.stop());
    const jobsTask = TASKS.find((x) => x.name === 'jobs.run');
    assert.ok(jobsTask);
    assert.deepEqual(await worker.scheduler.runOnce(jobsTask), { dead_letter: 1 });
    const failed = await s.h.ctx.metrics.registry.getSingleMetricAsString('service_jobs_failed_total');
    assert.match(failed, /service_jobs_failed_total\{type="organization.delete"\} 1/);
    const dead = await jobRow(s, job_id);
    assert.equal(dead.state, 'dead_letter');
    assert.match(dead.last_error, /permanent failure.*org\.delete/);
    const [still] = await rows(s.h, 'select state from organizations where realm_id = $1 and id = $2', [
      s.realm.id,
      org.id,
    ]);
    assert.equal(still?.state, 'deleting');
    assert.equal((await outbox(s, 'organization.deletion.completed')).length, 0);

    const again = await s.admin.call('DELETE', `/organizations/${org.id}`);
    assert.equal(again.status, 202);
    const second: Body = await body(again);
    assert.notEqual(second.job_id, job_id);
    assert.equal(await runner(s, JOB_TYPES).runNext(), 'succeeded');
    const [tomb] = await rows(s.h, 'select state from organizations where realm_id = $1 and id = $2', [
      s.realm.id,
      org.id,
    ]);
    assert.equal(tomb?.state, 'deleted');
  });

  test('case=other jobs of an organization being deleted end cancelled', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const type = fileJob('config.export', 'realm.configuration.export', 'json');
    const id = await queue(s, type, s.admin.userId, { organizationId: org.id });
    assert.equal((await s.admin.call('DELETE', `/organizations/${org.id}`)).status, 202);
    const r = runner(s, [type, ...JOB_TYPES]);
    const ends = [await r.runNext(), await r.runNext()].sort();
    assert.deepEqual(ends, ['cancelled', 'succeeded']);
    assert.equal((await jobRow(s, id)).state, 'cancelled');
    assert.deepEqual(type.runs, []);
  });

  test('case=Idempotency-Key: malformed is 400, reused for another organization is 409', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const b = await createOrg(s);
    const bad = await s.admin.call('DELETE', `/organizations/${a.id}`, undefined, {
      'idempotency-key': 'has space',
    });
    assert.equal(bad.status, 400);
    const key = { 'idempotency-key': 'k-123' };
    assert.equal((await s.admin.call('DELETE', `/organizations/${a.id}`, undefined, key)).status, 202);
    const reused = await s.admin.call('DELETE', `/organizations/${b.id}`, undefined, key);
    assert.equal(reused.status, 409);
    const [still] = await rows(s.h, 'select state from organizations where realm_id = $1 and id = $2', [
      s.realm.id,
      b.id,
    ]);
    assert.equal(still?.state, 'active', 'nothing happened to the other organization');
    const otherCaller = await orgCaller(s, b.id, 'owner');
    const theirs = await otherCaller.call('DELETE', `/organizations/${b.id}`, undefined, key);
    assert.equal(theirs.status, 202, 'keys are per requester');
  });
});
