// Outbound provisioning, pull (docs/provisioning.md): the directory.sync job reads the Users and
// Groups of another realm's inbound SCIM server, a real SCIM 2.0 service provider, and reconciles
// them here: created, updated, deactivated when gone, unchanged ones left alone; what it brought in
// is not pushed back to where it came from.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createTarget, pushPass, remoteUsers, runJobs, type Setup, setup } from './provisioning-kit.ts';

const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';

async function directoryUser(s: Setup, n: number): Promise<string> {
  const r = await s.peer.scim('POST', '/Users', {
    schemas: [USER],
    userName: `dir.user${n}@example.com`,
    displayName: `Directory User ${n}`,
    emails: [{ primary: true, value: `dir.user${n}@example.com`, type: 'work' }],
    externalId: `00u${n}`,
    active: true,
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.id;
}

async function sync(s: Setup, targetId: string) {
  const queued = await s.source.api('POST', `/provisioning-targets/${targetId}/sync`);
  assert.equal(queued.status, 202, JSON.stringify(queued.body));
  const ran = await runJobs(s);
  const job = await s.source.api('GET', `/jobs/${queued.body.job_id}`);
  assert.deepEqual(ran, { succeeded: 1 }, JSON.stringify(job.body));
  assert.equal(job.body.type, 'directory.sync');
  assert.equal(job.body.state, 'succeeded', JSON.stringify(job.body));
  return job.body.result.counts as Record<string, number>;
}

/** The accounts the target's sync provisioned here, by userName. */
async function pulled(s: Setup, targetId: string) {
  const r = await s.h.ctx.db.query<{
    user_name: string;
    state: string;
    display_name: string | null;
    id: string;
  }>(
    `select s.user_name, u.state, u.display_name, u.id from scim_users s
       join users u on u.realm_id = s.realm_id and u.id = s.user_id
      where s.realm_id = $1 and s.connector_id = $2`,
    [s.source.realm.id, targetId],
  );
  return new Map(r.rows.map((x) => [x.user_name, x]));
}

async function localMembers(s: Setup, name: string): Promise<string[]> {
  const r = await s.h.ctx.db.query<{ subject_id: string }>(
    `select gm.subject_id from groups g join group_members gm on gm.realm_id = g.realm_id and gm.group_id = g.id
      where g.realm_id = $1 and g.name = $2 order by gm.subject_id`,
    [s.source.realm.id, name],
  );
  return r.rows.map((x) => x.subject_id);
}

describe('provisioning › directory.sync from an outside SCIM server', () => {
  test('case=users and a group are created, then updated, deactivated and left alone as the directory says', async (t) => {
    const s = await setup(t);
    const remoteIds: string[] = [];
    for (let i = 0; i < 5; i++) remoteIds.push(await directoryUser(s, i));
    const [a, b, c] = remoteIds;
    const group = await s.peer.scim('POST', '/Groups', {
      schemas: [GROUP],
      displayName: 'directory-team',
      members: [{ value: a }, { value: b }],
    });
    assert.equal(group.status, 201, JSON.stringify(group.body));
    const target = await createTarget(s, { push: false });

    const first = await sync(s, target.id);
    assert.equal(first.users_created, 5);
    assert.equal(first.groups_created, 1);
    let here = await pulled(s, target.id);
    assert.equal(here.size, 5);
    assert.equal(here.get('dir.user3@example.com')?.display_name, 'Directory User 3');
    const idOf = (n: number) => here.get(`dir.user${n}@example.com`)?.id ?? '';
    assert.deepEqual(await localMembers(s, 'directory-team'), [idOf(0), idOf(1)].sort());

    // The directory renames one, removes one and changes the group.
    assert.equal(
      (
        await s.peer.scim('PATCH', `/Users/${a}`, {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
          Operations: [{ op: 'replace', value: { displayName: 'Renamed In Directory' } }],
        })
      ).status,
      200,
    );
    assert.equal((await s.peer.scim('DELETE', `/Users/${c}`)).status, 204);
    assert.equal(
      (
        await s.peer.scim('PATCH', `/Groups/${group.body.id}`, {
          schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
          Operations: [{ op: 'remove', path: `members[value eq "${b}"]` }],
        })
      ).status < 300,
      true,
    );

    const second = await sync(s, target.id);
    assert.deepEqual(
      {
        updated: second.users_updated,
        deactivated: second.users_deactivated,
        unchanged: second.users_unchanged,
        groups: second.groups_updated,
      },
      { updated: 1, deactivated: 1, unchanged: 3, groups: 1 },
    );
    here = await pulled(s, target.id);
    assert.equal(here.get('dir.user0@example.com')?.display_name, 'Renamed In Directory');
    assert.equal(here.get('dir.user2@example.com')?.state, 'suspended');
    assert.equal(here.get('dir.user4@example.com')?.state, 'active');
    assert.deepEqual(await localMembers(s, 'directory-team'), [idOf(0)]);

    // A third run finds nothing to change.
    const third = await sync(s, target.id);
    assert.equal(third.users_unchanged, 4);
    assert.equal(third.users_updated ?? 0, 0);
    assert.equal(third.groups_unchanged, 1);

    // Pushing to the same server sends this realm's own accounts, never the ones it pulled from there.
    assert.equal(
      (await s.source.api('PATCH', `/provisioning-targets/${target.id}`, { push: true })).status,
      200,
    );
    await pushPass(s, target.id);
    const there = await remoteUsers(s);
    assert.deepEqual(
      [...there.keys()].sort(),
      [s.source.admin.email, ...[0, 1, 3, 4].map((n) => `dir.user${n}@example.com`)].sort(),
    );
  });

  test('case=a run that lost its links finds the accounts it made instead of making them again', async (t) => {
    const s = await setup(t);
    for (let i = 0; i < 3; i++) await directoryUser(s, i);
    const target = await createTarget(s, { push: false });
    assert.equal((await sync(s, target.id)).users_created, 3);
    const before = await pulled(s, target.id);
    // As if each change had committed and the run had ended before writing its link.
    await s.h.ctx.db.query(`delete from provisioning_links where target_id = $1`, [target.id]);
    const again = await sync(s, target.id);
    assert.deepEqual([again.users_created ?? 0, again.users_updated], [0, 3]);
    const after = await pulled(s, target.id);
    assert.deepEqual(
      [...after.values()].map((u) => u.id).sort(),
      [...before.values()].map((u) => u.id).sort(),
    );
  });

  test('case=a requester without the permission any more dead-letters the job and nothing is written', async (t) => {
    const s = await setup(t);
    await directoryUser(s, 9);
    const target = await createTarget(s, { push: false });
    const queued = await s.source.api('POST', `/provisioning-targets/${target.id}/sync`);
    assert.equal(queued.status, 202);
    await s.h.ctx.db.query(`delete from role_assignments where realm_id = $1 and subject_id = $2`, [
      s.source.realm.id,
      s.source.admin.userId,
    ]);
    assert.deepEqual(await runJobs(s), { dead_letter: 1 });
    assert.equal((await pulled(s, target.id)).size, 0);
  });

  test('case=a sync of a paused target is refused, and an unknown target is 404', async (t) => {
    const s = await setup(t);
    const target = await createTarget(s, { push: false });
    assert.equal(
      (await s.source.api('PATCH', `/provisioning-targets/${target.id}`, { state: 'paused' })).status,
      200,
    );
    assert.equal((await s.source.api('POST', `/provisioning-targets/${target.id}/sync`)).status, 409);
    assert.equal(
      (await s.source.api('POST', `/provisioning-targets/prt_${'0'.repeat(26)}/sync`)).status,
      404,
    );
  });
});
