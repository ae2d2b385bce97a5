// Outbound provisioning, push (docs/provisioning.md): a realm pushes its users and a group to the
// inbound SCIM server of a second realm of the same service, a real SCIM 2.0 service provider, and
// a change, a suspension, a membership change and a deletion follow; a lost link does not make a
// second copy; the credential is in no answer; a private destination needs the operator's consent.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createTarget, pushPass, remoteGroup, remoteUsers, setup } from './provisioning-kit.ts';

const REASON = { reason: 'provisioning test' };

describe('provisioning › push to an outside SCIM server', () => {
  test('case=20 users and a group arrive, then a change, a suspension, a membership change and a deletion follow', async (t) => {
    const s = await setup(t);
    const users: { id: string; email: string }[] = [];
    for (let i = 0; i < 20; i++) {
      const email = `pushed${i}@example.com`;
      const u = await s.h.createUser(s.source.realm, { email, password: 'correct-horse-9' });
      users.push({ id: u.id, email });
    }
    const group = await s.source.api('POST', '/groups', { name: 'engineering' });
    assert.equal(group.status, 201, JSON.stringify(group.body));
    for (const u of users.slice(0, 3)) {
      const r = await s.source.api('PUT', `/groups/${group.body.id}/members/user/${u.id}`);
      assert.equal(r.status, 204);
    }
    const target = await createTarget(s);

    const first = await pushPass(s, target.id);
    assert.ok(!first.some((o) => o.endsWith('rejected') || o.endsWith('unavailable')), first.join('\n'));
    let remote = await remoteUsers(s);
    for (const u of users) {
      const copy = remote.get(u.email);
      assert.ok(copy, `${u.email} at the target`);
      assert.equal(copy.externalId, u.id);
      assert.equal(copy.active, true);
    }
    const g = await remoteGroup(s, 'engineering');
    assert.ok(g, 'the group at the target');
    const memberIds = (g.members ?? []).map((m: { value: string }) => m.value).sort();
    const expected = users
      .slice(0, 3)
      .map((u) => remote.get(u.email).id)
      .sort();
    assert.deepEqual(memberIds, expected);

    // Nothing changed: nothing is sent.
    assert.deepEqual(await pushPass(s, target.id), []);

    const [changed, suspended, deleted, left] = [users[0], users[1], users[2], users[3]];
    assert.ok(changed && suspended && deleted && left);
    assert.equal(
      (await s.source.api('PATCH', `/users/${changed.id}`, { display_name: 'Renamed Person' })).status,
      200,
    );
    assert.equal((await s.source.api('POST', `/users/${suspended.id}/suspend`, REASON)).status, 200);
    assert.equal((await s.source.api('DELETE', `/users/${deleted.id}`)).status, 204);
    assert.equal(
      (await s.source.api('DELETE', `/groups/${group.body.id}/members/user/${changed.id}`)).status,
      204,
    );
    const second = await pushPass(s, target.id);
    assert.deepEqual([...second].sort(), [
      'group update accepted',
      'user delete accepted',
      'user update accepted',
      'user update accepted',
    ]);
    remote = await remoteUsers(s);
    assert.equal(remote.get(changed.email).displayName, 'Renamed Person');
    assert.equal(remote.get(suspended.email).active, false);
    assert.equal(remote.has(deleted.email), false, 'the deleted account is gone at the target');
    assert.ok(remote.get(left.email));
    const after = await remoteGroup(s, 'engineering');
    assert.deepEqual(
      (after.members ?? []).map((m: { value: string }) => m.value),
      [remote.get(suspended.email).id],
    );

    const status = await s.source.api('GET', `/provisioning-targets/${target.id}`);
    assert.equal(status.body.push_status.consecutive_failures, 0);
    assert.ok(status.body.push_status.last_pushed_at);
  });

  test('case=a push whose link was lost finds its copy instead of making a second one', async (t) => {
    const s = await setup(t);
    const u = await s.h.createUser(s.source.realm, {
      email: 'once@example.com',
      password: 'correct-horse-9',
    });
    const target = await createTarget(s);
    await pushPass(s, target.id);
    const before = (await remoteUsers(s)).get('once@example.com');
    assert.ok(before);
    // As if the worker died after the target's 201 and before the link was written.
    await s.h.ctx.db.query('delete from provisioning_links where target_id = $1 and local_id = $2', [
      target.id,
      u.id,
    ]);
    const again = await pushPass(s, target.id);
    assert.deepEqual(again, ['user create accepted']);
    const list = await s.peer.scim(
      'GET',
      `/Users?filter=${encodeURIComponent('userName eq "once@example.com"')}`,
    );
    assert.equal(list.body.totalResults, 1);
    const link = await s.h.ctx.db.query<{ remote_id: string }>(
      'select remote_id from provisioning_links where target_id = $1 and local_id = $2',
      [target.id, u.id],
    );
    assert.equal(link.rows[0]?.remote_id, before.id);
  });

  test('case=an unreachable target keeps its place and backs off; a wrong credential is refused per resource', async (t) => {
    const s = await setup(t);
    await s.h.createUser(s.source.realm, { email: 'waiting@example.com', password: 'correct-horse-9' });
    const target = await createTarget(s, { bearer_token: 'not-a-connector-token' });
    const ops = await pushPass(s, target.id);
    assert.ok(ops.length > 0 && ops.every((o) => o === 'user create rejected'), ops.join('\n'));
    const port = new URL(s.h.publicUrl).port;
    const closed = await s.source.api('PATCH', `/provisioning-targets/${target.id}`, {
      base_url: `http://peer.test:1/api/v1/realms/${s.remote.realm.name}/scim/v2`,
      bearer_token: s.peer.token,
    });
    assert.equal(closed.status, 200, JSON.stringify(closed.body));
    assert.ok(port);
    assert.deepEqual(await pushPass(s, target.id), ['user request unavailable']);
    const row = await s.source.api('GET', `/provisioning-targets/${target.id}`);
    assert.equal(row.body.push_status.consecutive_failures, 1);
    assert.equal(row.body.push_status.last_error, 'network_error');
  });

  test('case=the credential is in no answer, the creation included', async (t) => {
    const s = await setup(t);
    const secret = s.peer.token;
    const created = await createTarget(s);
    const answers = [
      created,
      (await s.source.api('GET', `/provisioning-targets/${created.id}`)).body,
      (await s.source.api('GET', '/provisioning-targets')).body,
      (
        await s.source.api('PATCH', `/provisioning-targets/${created.id}`, {
          name: 'renamed',
          bearer_token: secret,
        })
      ).body,
    ];
    for (const a of answers) {
      const text = JSON.stringify(a);
      assert.ok(!text.includes(secret), text);
      assert.ok(!text.includes(secret.slice(-16)), text);
    }
    const stored = await s.h.ctx.db.query<{ credential_sealed: string }>(
      'select credential_sealed from provisioning_targets where id = $1',
      [created.id],
    );
    assert.ok(!String(stored.rows[0]?.credential_sealed).includes(secret.slice(-16)), 'sealed at rest');
    const audit = await s.h.ctx.db.query('select data from audit_events where realm_id = $1', [
      s.source.realm.id,
    ]);
    assert.ok(!JSON.stringify(audit.rows).includes(secret.slice(-16)), 'not in the audit trail');
  });

  test('case=a private destination is refused without allow_private_network and outside the allowlist', async (t) => {
    const s = await setup(t);
    const refused = async (body: Record<string, unknown>, field: string) => {
      const r = await s.source.api('POST', '/provisioning-targets', {
        name: 'private',
        base_url: s.peer.baseUrl,
        bearer_token: 'x',
        ...body,
      });
      assert.equal(r.status, 422, JSON.stringify(r.body));
      assert.equal(r.body.code, 'validation_failed');
      assert.deepEqual(
        r.body.errors.map((e: { field: string }) => e.field),
        [field],
      );
      return r.body.errors[0].code;
    };
    assert.equal(await refused({}, 'base_url'), 'egress_denied');
    assert.equal(
      await refused({ base_url: 'http://private.test/scim/v2', allow_private_network: true }, 'base_url'),
      'egress_denied',
    );
    assert.equal(await refused({ base_url: 'http://127.0.0.1:1/scim/v2' }, 'base_url'), 'egress_denied');
    const listed = await s.source.api('GET', '/provisioning-targets');
    assert.deepEqual(listed.body.items, []);
    // A change of destination is checked as a new one.
    const target = await createTarget(s);
    const moved = await s.source.api('PATCH', `/provisioning-targets/${target.id}`, {
      base_url: 'http://private.test/scim/v2',
    });
    assert.equal(moved.status, 422, JSON.stringify(moved.body));
    assert.deepEqual(
      moved.body.errors.map((e: { field: string; code: string }) => [e.field, e.code]),
      [['base_url', 'egress_denied']],
    );
    const kept = await s.source.api('GET', `/provisioning-targets/${target.id}`);
    assert.equal(kept.body.base_url, s.peer.baseUrl);
  });
});
