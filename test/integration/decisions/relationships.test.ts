// The relationship model API and relationship checks (docs/authorization.md, "Relationship
// model API", "Relationship checks"; doc 2, Limits: Relationships).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import { checkBody, type DecisionKit, decisionKit, type Tuple, tuple } from './decision-kit.ts';

const FOLDER = {
  relations: { parent: ['folder'], viewer: ['user', 'group#member', 'organization#member'], owner: ['user'] },
  permissions: { view: 'viewer + owner + parent->view', edit: 'owner' },
};
const DOCUMENT = {
  relations: {
    parent: ['folder'],
    viewer: ['user', 'team#member', 'group#member', 'organization#member'],
    editor: ['user', 'team#member'],
    banned: ['user'],
  },
  permissions: { edit: 'editor', view: '(viewer + edit + parent->view) - banned', review: 'viewer & editor' },
};
const TEAM = { relations: { member: ['user', 'team#member'] }, permissions: { is_member: 'member' } };

async function model(k: DecisionKit) {
  for (const [name, body] of Object.entries({ folder: FOLDER, team: TEAM, document: DOCUMENT })) {
    const r = await k.caller.call('PUT', `/authorization/types/${name}`, body);
    assert.equal(r.status, 201, await r.text());
  }
}

const write = (k: DecisionKit, writes: Tuple[], deletes: Tuple[] = []) =>
  k.post('/authorization/tuples', { writes, deletes });

describe('relationships › model API', () => {
  test('case=types are created, read, replaced and deleted; invalid ones refused', async (t) => {
    const k = await decisionKit(t, { callerRoles: ['realm-admin'] });
    await model(k);
    const list = await k.caller.call('GET', '/authorization/types');
    assert.deepEqual(
      ((await list.json()) as { items: { name: string }[] }).items.map((i) => i.name),
      ['document', 'folder', 'team'],
    );
    const one = (await (await k.caller.call('GET', '/authorization/types/folder')).json()) as Record<
      string,
      unknown
    >;
    assert.deepEqual(one.permissions, FOLDER.permissions);
    assert.equal((await k.caller.call('PUT', '/authorization/types/folder', FOLDER)).status, 200);

    const refused = async (body: unknown, field: RegExp) => {
      const r = await k.caller.call('PUT', '/authorization/types/thing', body);
      const b = (await r.json()) as { errors?: { field: string }[] };
      assert.equal(r.status, 422, JSON.stringify(b));
      assert.ok(
        b.errors?.some((e) => field.test(e.field)),
        JSON.stringify(b),
      );
    };
    await refused({ relations: { a: ['user'] }, permissions: { p: 'a +' } }, /permissions\.p/);
    await refused({ relations: { a: ['user'] }, permissions: { p: 'nope' } }, /permissions\.p/);
    await refused({ relations: { a: ['user'] }, permissions: { p: 'q', q: 'p' } }, /permissions\./);
    await refused({ relations: { a: ['user'] }, permissions: { p: 'q->a', q: 'a' } }, /permissions\.p/);
    await refused({ relations: { a: ['User!'] }, permissions: { p: 'a' } }, /relations\.a/);
    await refused({ relations: {}, permissions: { p: 'a' } }, /relations/);

    const relations32 = Object.fromEntries(Array.from({ length: 32 }, (_, i) => [`r${i}`, ['user']]));
    const ok32 = await k.caller.call('PUT', '/authorization/types/wide', {
      relations: relations32,
      permissions: { p: 'r0' },
    });
    assert.equal(ok32.status, 201);
    await refused({ relations: { ...relations32, r32: ['user'] }, permissions: { p: 'r0' } }, /relations/);

    assert.equal((await write(k, [tuple('team:t1', 'member', 'user:u1')])).status, 200);
    const busy = await k.caller.call('DELETE', '/authorization/types/team');
    assert.equal(busy.status, 409);
    const dropRelation = await k.caller.call('PUT', '/authorization/types/team', {
      relations: { lead: ['user'] },
      permissions: { is_member: 'lead' },
    });
    assert.equal(dropRelation.status, 409);
    assert.equal((await write(k, [], [tuple('team:t1', 'member', 'user:u1')])).status, 200);
    assert.equal((await k.caller.call('DELETE', '/authorization/types/team')).status, 204);
    assert.equal((await k.caller.call('GET', '/authorization/types/team')).status, 404);
  });

  test('case=tuples are validated against their type and limited per request and object', async (t) => {
    const k = await decisionKit(t, { callerRoles: ['realm-admin'] });
    await model(k);
    const bad = async (tuples: Tuple[], status: number) => {
      const r = await write(k, tuples);
      assert.equal(r.status, status, JSON.stringify(r.body));
    };
    await bad([tuple('nothing:x', 'viewer', 'user:u')], 422);
    await bad([tuple('document:x', 'owner', 'user:u')], 422);
    await bad([tuple('document:x', 'editor', 'group:g#member')], 422);
    await bad([tuple('document:x', 'viewer', 'user:u', { org_id: 'org_missing' })], 422);
    await bad([{ ...tuple('document:x', 'viewer', 'user:u'), color: 'red' }], 400);

    const hundred = Array.from({ length: 100 }, (_, i) => tuple('document:big', 'viewer', `user:u${i}`));
    assert.equal((await write(k, hundred)).status, 200);
    const over = await write(
      k,
      [...hundred.slice(0, 60)],
      hundred.slice(60).concat([tuple('document:big', 'viewer', 'user:zz')]),
    );
    assert.equal(over.status, 422);
    assert.match(String(over.body.detail), /1 to 100/);
    assert.equal((await write(k, [])).status, 422);

    // 1000 tuples per object: fill to 999 directly, then the API may add one, not two.
    await k.h.ctx.db.query(
      `insert into authz_tuples (realm_id, object_type, object_id, relation, subject_type, subject_id, subject_relation, created_at)
       select $1, 'document', 'full', 'viewer', 'user', 'u' || g, '', now() from generate_series(1, 999) g`,
      [k.realm.id],
    );
    assert.equal((await write(k, [tuple('document:full', 'viewer', 'user:last')])).status, 200);
    const full = await write(k, [tuple('document:full', 'viewer', 'user:one-too-many')]);
    assert.equal(full.status, 409);
    assert.match(String(full.body.detail), /1000/);

    const page1 = await k.caller.call(
      'GET',
      '/authorization/tuples?object_type=document&object_id=big&limit=60',
    );
    const p1 = (await page1.json()) as { items: unknown[]; next_cursor: string };
    assert.equal(p1.items.length, 60);
    const page2 = await k.caller.call(
      'GET',
      `/authorization/tuples?object_type=document&object_id=big&limit=60&cursor=${p1.next_cursor}`,
    );
    const p2 = (await page2.json()) as { items: unknown[]; next_cursor: string | null };
    assert.equal(p2.items.length, 40);
    assert.equal(p2.next_cursor, null);
    const wrongCursor = await k.caller.call(
      'GET',
      `/authorization/tuples?object_type=team&cursor=${p1.next_cursor}`,
    );
    assert.equal(wrongCursor.status, 400);
  });

  test('case=writing tuples moves policy_version and audits once per request', async (t) => {
    const k = await decisionKit(t, { callerRoles: ['realm-admin', 'resource-server'] });
    await model(k);
    const { userId, token } = await k.subject();
    const before = await k.check(checkBody(token, 'view', { type: 'document', id: 'd1' }));
    assert.equal(before.body.reason_code, 'NOT_PERMITTED');
    await write(k, [
      tuple('document:d1', 'viewer', `user:${userId}`),
      tuple('document:d2', 'viewer', `user:${userId}`),
    ]);
    const after = await k.check(checkBody(token, 'view', { type: 'document', id: 'd1' }));
    assert.equal(after.body.reason_code, 'ALLOWED');
    assert.notEqual(after.body.policy_version, before.body.policy_version);
    const audits = await k.h.ctx.db.query<{ n: number }>(
      `select count(*)::int as n from audit_events where realm_id = $1 and type = 'authorization.tuples.written'`,
      [k.realm.id],
    );
    assert.equal(audits.rows[0]?.n, 1);
  });
});

describe('relationships › checks', () => {
  test('case=direct, subject sets, arrows, intersection and exclusion', async (t) => {
    const k = await decisionKit(t, { callerRoles: ['realm-admin', 'resource-server'] });
    await model(k);
    const alice = await k.subject();
    const bob = await k.subject();
    const org = await seedOrganization(k.h, k.realm);
    await seedMembership(k.h, k.realm, org, bob.userId);
    const a = `user:${alice.userId}`;
    const w = await write(k, [
      tuple('document:d1', 'editor', a),
      tuple('document:d2', 'viewer', 'team:t1#member'),
      tuple('team:t1', 'member', 'team:t2#member'),
      tuple('team:t2', 'member', a),
      tuple('document:d3', 'parent', 'folder:f1'),
      tuple('folder:f1', 'parent', 'folder:f0'),
      tuple('folder:f0', 'viewer', a),
      tuple('document:d4', 'viewer', a),
      tuple('document:d4', 'banned', a),
      tuple('document:d5', 'viewer', `organization:${org}#member`),
      tuple('document:d6', 'viewer', a),
      tuple('document:d6', 'editor', a),
    ]);
    assert.equal(w.status, 200, JSON.stringify(w.body));
    const is = async (token: string, action: string, id: string, code: string) => {
      const r = await k.check(checkBody(token, action, { type: 'document', id }));
      assert.equal(r.body.reason_code, code, `${action} ${id}`);
    };
    await is(alice.token, 'edit', 'd1', 'ALLOWED');
    await is(alice.token, 'view', 'd1', 'ALLOWED');
    await is(alice.token, 'editor', 'd1', 'ALLOWED');
    await is(alice.token, 'view', 'd2', 'ALLOWED');
    await is(alice.token, 'view', 'd3', 'ALLOWED');
    await is(alice.token, 'view', 'd4', 'NOT_PERMITTED');
    await is(alice.token, 'review', 'd1', 'NOT_PERMITTED');
    await is(alice.token, 'review', 'd6', 'ALLOWED');
    await is(bob.token, 'view', 'd5', 'ALLOWED');
    await is(alice.token, 'view', 'd5', 'NOT_PERMITTED');
    await is(bob.token, 'view', 'd1', 'NOT_PERMITTED');
    await is(alice.token, 'approve', 'd1', 'INVALID_REQUEST');
    const noId = await k.check(checkBody(alice.token, 'view', { type: 'document' }));
    assert.equal(noId.body.reason_code, 'INVALID_REQUEST');
  });

  test('case=tuples of an organization count only in it; its object refuses other organizations', async (t) => {
    const k = await decisionKit(t, { callerRoles: ['realm-admin', 'resource-server'] });
    await model(k);
    const orgA = await seedOrganization(k.h, k.realm);
    const orgB = await seedOrganization(k.h, k.realm);
    const s = await k.subject();
    await seedMembership(k.h, k.realm, orgA, s.userId);
    await seedMembership(k.h, k.realm, orgB, s.userId);
    await write(k, [tuple('document:a1', 'viewer', `user:${s.userId}`, { org_id: orgA })]);
    const view = (org?: string, token = s.token) =>
      k.check(checkBody(token, 'view', { type: 'document', id: 'a1', ...(org ? { org_id: org } : {}) }));
    assert.equal((await view(orgA)).body.reason_code, 'ALLOWED');
    assert.equal((await view()).body.reason_code, 'ALLOWED');
    assert.equal((await view(orgB)).body.reason_code, 'ORGANIZATION_MISMATCH');
    const boundB = await k.subject({ userId: s.userId, orgId: orgB });
    assert.equal((await view(undefined, boundB.token)).body.reason_code, 'ORGANIZATION_MISMATCH');
    const boundA = await k.subject({ userId: s.userId, orgId: orgA });
    assert.equal((await view(undefined, boundA.token)).body.reason_code, 'ALLOWED');
  });

  test('case=depth 7 and more than 64 object reads are evaluation errors', async (t) => {
    const k = await decisionKit(t, { callerRoles: ['realm-admin', 'resource-server'] });
    await model(k);
    const s = await k.subject();
    // f1 -> f2 -> ... -> f7: the viewer on f6 is 6 deep from f1, on f7 seven deep.
    const chain = Array.from({ length: 6 }, (_, i) =>
      tuple(`folder:f${i + 1}`, 'parent', `folder:f${i + 2}`),
    );
    await write(k, [...chain, tuple('folder:f6', 'viewer', `user:${s.userId}`)]);
    const view = (id: string) => k.check(checkBody(s.token, 'view', { type: 'folder', id }));
    assert.equal((await view('f1')).body.reason_code, 'ALLOWED');
    await write(
      k,
      [tuple('folder:f7', 'viewer', `user:${s.userId}`)],
      [tuple('folder:f6', 'viewer', `user:${s.userId}`)],
    );
    const deep = await view('f1');
    assert.deepEqual([deep.body.reason_code, deep.body.cache_ttl_seconds], ['EVALUATION_ERROR', 0]);
    assert.equal((await view('f2')).body.reason_code, 'ALLOWED');

    const wide = Array.from({ length: 64 }, (_, i) => tuple('document:wide', 'viewer', `team:w${i}#member`));
    await write(k, wide);
    const tooMany = await k.check(checkBody(s.token, 'view', { type: 'document', id: 'wide' }));
    assert.equal(tooMany.body.reason_code, 'EVALUATION_ERROR');
    await write(k, [], wide.slice(1));
    assert.equal(
      (await k.check(checkBody(s.token, 'view', { type: 'document', id: 'wide' }))).body.reason_code,
      'NOT_PERMITTED',
    );
  });

  test('case=a batch mixes roles and relationships', async (t) => {
    const k = await decisionKit(t, { callerRoles: ['realm-admin', 'resource-server'] });
    await model(k);
    const role = await k.role('editor', ['documents.edit']);
    const s = await k.subject();
    await k.assign(role, { type: 'user', id: s.userId });
    await write(k, [tuple('document:d1', 'viewer', `user:${s.userId}`)]);
    const r = await k.post('/authorization/check-batch', {
      checks: [
        checkBody(s.token, 'view', { type: 'document', id: 'd1' }),
        checkBody(s.token, 'view', { type: 'document', id: 'd2' }),
        checkBody(s.token, 'documents.edit', { type: 'report', id: 'r1' }),
        checkBody(s.token, 'documents.edit', { type: 'document', id: 'd1' }),
      ],
    });
    const codes = (r.body.results as { reason_code: string }[]).map((x) => x.reason_code);
    assert.deepEqual(codes, ['ALLOWED', 'NOT_PERMITTED', 'ALLOWED', 'INVALID_REQUEST']);
  });

  test('case=list-objects pages through what the subject may act on', async (t) => {
    const k = await decisionKit(t, { callerRoles: ['realm-admin', 'resource-server'] });
    await model(k);
    const s = await k.subject();
    const a = `user:${s.userId}`;
    const direct = Array.from({ length: 30 }, (_, i) =>
      tuple(`document:d${String(i).padStart(2, '0')}`, 'viewer', a),
    );
    await write(k, [
      ...direct,
      tuple('document:d05', 'banned', a),
      tuple('document:x1', 'parent', 'folder:f1'),
      tuple('folder:f1', 'viewer', a),
    ]);
    const list = (extra: Record<string, unknown> = {}) =>
      k.post('/authorization/list-objects', {
        subject_token: s.token,
        action: 'view',
        resource_type: 'document',
        ...extra,
      });
    const all = await list();
    assert.equal(all.status, 200);
    const objects = all.body.objects as string[];
    assert.equal(objects.length, 30);
    assert.ok(objects.includes('x1') && !objects.includes('d05'));
    assert.equal(all.body.next_cursor, null);

    const first = await list({ page_size: 20 });
    assert.equal((first.body.objects as string[]).length, 20);
    const second = await list({ page_size: 20, cursor: first.body.next_cursor });
    assert.equal((second.body.objects as string[]).length, 10);
    assert.deepEqual(
      [...(first.body.objects as string[]), ...(second.body.objects as string[])].sort(),
      [...objects].sort(),
    );

    const inactive = await list({ subject_token: 'garbage' });
    assert.deepEqual(
      [inactive.status, inactive.body.objects, inactive.body.reason_code],
      [200, [], 'SUBJECT_TOKEN_INACTIVE'],
    );
    const unknownType = await list({ resource_type: 'invoice' });
    assert.equal(unknownType.body.reason_code, 'INVALID_REQUEST');
    assert.equal((await list({ page_size: 501 })).status, 422);
    // An invalid cursor is 400 whatever is wrong with it (spec doc 1, Errors).
    assert.equal((await list({ cursor: '!' })).status, 400);
  });
});
