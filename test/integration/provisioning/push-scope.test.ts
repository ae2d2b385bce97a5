// Outbound provisioning, push (docs/provisioning.md): an organization's target holds its active
// members only and loses a member whose membership ends; a group deleted here is deleted there;
// a copy removed at the target behind our back is made again.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { addEvent, dispatchOutboxTo } from '../../../src/events/index.ts';
import { nudgeProvisioning } from '../../../src/provisioning/index.ts';
import { claimDueTargets } from '../../../src/provisioning/provisioning-targets.repo.ts';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import { createTarget, pushPass, remoteGroup, remoteUsers, runJobs, setup } from './provisioning-kit.ts';

describe('provisioning › push scope', () => {
  test('case=an organization target pushes its active members, and deletes one whose membership ended', async (t) => {
    const s = await setup(t);
    const org = await seedOrganization(s.h, s.source.realm);
    const member = await s.h.createUser(s.source.realm, {
      email: 'member@example.com',
      password: 'correct-horse-9',
    });
    await s.h.createUser(s.source.realm, { email: 'outsider@example.com', password: 'correct-horse-9' });
    await seedMembership(s.h, s.source.realm, org, member.id);
    const target = await createTarget(s, {}, `/organizations/${org}`);
    assert.equal(target.organization_id, org);
    // Not visible on the realm's routes, nor the realm's on the organization's.
    assert.equal((await s.source.api('GET', `/provisioning-targets/${target.id}`)).status, 404);

    await pushPass(s, target.id);
    assert.deepEqual([...(await remoteUsers(s)).keys()], ['member@example.com']);

    await s.h.ctx.db.query(
      `update memberships set state = 'removed' where realm_id = $1 and organization_id = $2 and user_id = $3`,
      [s.source.realm.id, org, member.id],
    );
    assert.deepEqual(await pushPass(s, target.id), ['user delete accepted']);
    assert.equal((await remoteUsers(s)).size, 0);

    // Deleting the organization deletes its targets, sealed credentials and links with them.
    const deleting = await s.source.api('DELETE', `/organizations/${org}`);
    assert.equal(deleting.status, 202, JSON.stringify(deleting.body));
    assert.deepEqual(await runJobs(s), { succeeded: 1 });
    const left = await s.h.ctx.db.query('select 1 from provisioning_targets where id = $1', [target.id]);
    assert.equal(left.rows.length, 0);
  });

  test('case=a group deleted here is deleted there; a copy removed there is made again', async (t) => {
    const s = await setup(t);
    const u = await s.h.createUser(s.source.realm, {
      email: 'again@example.com',
      password: 'correct-horse-9',
    });
    const group = await s.source.api('POST', '/groups', { name: 'short-lived' });
    assert.equal(group.status, 201);
    const target = await createTarget(s);
    await pushPass(s, target.id);
    assert.ok(await remoteGroup(s, 'short-lived'));

    assert.equal((await s.source.api('DELETE', `/groups/${group.body.id}`)).status, 204);
    const copy = (await remoteUsers(s)).get('again@example.com');
    assert.equal((await s.peer.scim('DELETE', `/Users/${copy.id}`)).status, 204);
    assert.equal(
      (await s.source.api('PATCH', `/users/${u.id}`, { display_name: 'Changed Meanwhile' })).status,
      200,
    );

    const ops = await pushPass(s, target.id);
    assert.deepEqual([...ops].sort(), ['group delete accepted', 'user create accepted']);
    assert.equal(await remoteGroup(s, 'short-lived'), undefined);
    const again = (await remoteUsers(s)).get('again@example.com');
    assert.ok(again);
    assert.notEqual(again.id, copy.id);
    assert.equal(again.displayName, 'Changed Meanwhile');
  });

  test('case=targets are claimed under a lease, at most two of one tenant a claim', async (t) => {
    const s = await setup(t);
    const mine = [await createTarget(s), await createTarget(s), await createTarget(s)];
    const other = await s.remote.api('POST', '/provisioning-targets', {
      name: 'elsewhere',
      base_url: s.peer.baseUrl,
      bearer_token: s.peer.token,
      allow_private_network: true,
    });
    assert.equal(other.status, 201);
    const now = s.h.clock.now();
    const until = new Date(now.getTime() + 60_000);
    const ours = new Set([...mine.map((x) => x.id), other.body.id]);
    const claim = async (holder: string) =>
      (await s.h.ctx.db.tx((tx) => claimDueTargets(tx, holder, now, until, 3))).filter((x) => ours.has(x.id));
    const first = await claim('worker-a');
    assert.equal(first.filter((x) => x.realm_id === s.source.realm.id).length, 2);
    assert.ok(
      first.some((x) => x.id === other.body.id),
      'the other realm is not held back',
    );
    const second = await claim('worker-b');
    assert.deepEqual(
      second.map((x) => x.id),
      mine.map((x) => x.id).filter((id) => !first.some((x) => x.id === id)),
      'a leased target is not claimed twice',
    );
    assert.deepEqual(await claim('worker-c'), []);
  });

  test('case=an account event makes an idle target due at once; other events do not', async (t) => {
    const s = await setup(t);
    // The setup's own events (its administrators' accounts) go out first.
    await dispatchOutboxTo(s.h.ctx, s.h.clock.now(), [nudgeProvisioning]);
    const target = await createTarget(s);
    await pushPass(s, target.id);
    const dueAt = async () =>
      (
        await s.h.ctx.db.query<{ push_due_at: Date }>(
          'select push_due_at from provisioning_targets where id = $1',
          [target.id],
        )
      ).rows[0]?.push_due_at.getTime() ?? 0;
    const now = () => s.h.clock.now();
    await s.h.ctx.db.tx((tx) =>
      addEvent(tx, {
        realmId: s.source.realm.id,
        type: 'user.signed_in',
        data: { user_id: s.source.admin.userId, session_id: 'ses_x', client_id: 'cli_x' },
        occurredAt: now(),
      }),
    );
    await dispatchOutboxTo(s.h.ctx, now(), [nudgeProvisioning]);
    assert.ok((await dueAt()) > now().getTime(), 'a sign-in changes nothing a target holds');
    const user = await s.source.api('POST', '/users', { email: 'evented@example.com' });
    assert.equal(user.status, 201, JSON.stringify(user.body));
    await dispatchOutboxTo(s.h.ctx, now(), [nudgeProvisioning]);
    assert.ok((await dueAt()) <= now().getTime(), 'due at once after user.created');
    assert.deepEqual(await pushPass(s, target.id), ['user create accepted']);
  });
});
