// Regressions of the relationship evaluator found in review (docs/authorization.md, "Relationship
// checks", "Listing objects"): cycle cuts must not be memoized as answers, tuples of an
// organization count only for its live members, narrowed relations drop old subject types, reads
// are bounded per round and per listing, and a restored (lower) revision replaces cached types.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import { checkBody, type DecisionKit, decisionKit, type Tuple, tuple } from './decision-kit.ts';

async function put(k: DecisionKit, name: string, body: unknown, status = 201) {
  const r = await k.caller.call('PUT', `/authorization/types/${name}`, body);
  assert.equal(r.status, status, await r.text());
}

async function write(k: DecisionKit, writes: Tuple[], deletes: Tuple[] = []) {
  const r = await k.post('/authorization/tuples', { writes, deletes });
  assert.equal(r.status, 200, JSON.stringify(r.body));
}

const codeOf = async (k: DecisionKit, token: string, action: string, resource: Record<string, unknown>) =>
  (await k.check(checkBody(token, action, resource))).body.reason_code;

const kit = (t: Parameters<typeof decisionKit>[0]) =>
  decisionKit(t, { callerRoles: ['realm-admin', 'resource-server'] });

describe('relationships › cycles', () => {
  test('case=a cycle cut on one branch is not reused as a no by another (exclusion)', async (t) => {
    const k = await kit(t);
    await put(k, 'team', { relations: { member: ['user', 'team#member'] }, permissions: { is: 'member' } });
    await put(k, 'doc', {
      relations: { viewers: ['team#member'], blocked: ['team#member'] },
      permissions: { view: 'viewers - blocked', both: 'viewers & blocked' },
    });
    const s = await k.subject();
    // Insertion order matters: team:x is first reached through team:a, which is still on the path.
    for (const w of [
      tuple('doc:d', 'viewers', 'team:a#member'),
      tuple('doc:d', 'blocked', 'team:b#member'),
      tuple('team:a', 'member', 'team:x#member'),
      tuple('team:a', 'member', `user:${s.userId}`),
      tuple('team:x', 'member', 'team:a#member'),
      tuple('team:b', 'member', 'team:x#member'),
    ])
      await write(k, [w]);
    const doc = { type: 'doc', id: 'd' };
    assert.equal(await codeOf(k, s.token, 'blocked', doc), 'ALLOWED');
    assert.equal(await codeOf(k, s.token, 'viewers', doc), 'ALLOWED');
    assert.equal(await codeOf(k, s.token, 'view', doc), 'NOT_PERMITTED');
    assert.equal(await codeOf(k, s.token, 'both', doc), 'ALLOWED');
  });

  test('case=a cycle through the subtracted side of an exclusion is an evaluation error', async (t) => {
    const k = await kit(t);
    await put(k, 'doc', {
      relations: { viewer: ['user'], parent: ['doc'] },
      permissions: { view: 'viewer - parent->view' },
    });
    const s = await k.subject();
    await write(k, [tuple('doc:d', 'viewer', `user:${s.userId}`), tuple('doc:d', 'parent', 'doc:d')]);
    const r = await k.check(checkBody(s.token, 'view', { type: 'doc', id: 'd' }));
    assert.deepEqual([r.body.reason_code, r.body.cache_ttl_seconds], ['EVALUATION_ERROR', 0]);
    // Without the viewer tuple the left side alone decides.
    await write(k, [], [tuple('doc:d', 'viewer', `user:${s.userId}`)]);
    assert.equal(await codeOf(k, s.token, 'view', { type: 'doc', id: 'd' }), 'NOT_PERMITTED');
  });
});

const DOC = { relations: { viewer: ['user', 'service_principal'] }, permissions: { view: 'viewer' } };

describe('relationships › organization of tuples', () => {
  test('case=a tuple of an organization counts only while it is active and the user a live member', async (t) => {
    const k = await kit(t);
    await put(k, 'doc', DOC);
    const org = await seedOrganization(k.h, k.realm);
    const s = await k.subject();
    const membership = await seedMembership(k.h, k.realm, org, s.userId);
    await write(k, [tuple('doc:d', 'viewer', `user:${s.userId}`, { org_id: org })]);
    const plain = { type: 'doc', id: 'd' };
    const inOrg = { type: 'doc', id: 'd', org_id: org };
    assert.equal(await codeOf(k, s.token, 'view', plain), 'ALLOWED');
    assert.equal(await codeOf(k, s.token, 'view', inOrg), 'ALLOWED');
    const list = async () =>
      (
        await k.post('/authorization/list-objects', {
          subject_token: s.token,
          action: 'view',
          resource_type: 'doc',
        })
      ).body.objects;
    assert.deepEqual(await list(), ['d']);

    const db = k.h.ctx.db;
    await db.query(`update organizations set state = 'suspended' where realm_id = $1 and id = $2`, [
      k.realm.id,
      org,
    ]);
    assert.equal(await codeOf(k, s.token, 'view', plain), 'NOT_PERMITTED');
    assert.equal(await codeOf(k, s.token, 'view', inOrg), 'NOT_PERMITTED');
    assert.deepEqual(await list(), []);

    await db.query(`update organizations set state = 'active' where realm_id = $1 and id = $2`, [
      k.realm.id,
      org,
    ]);
    await db.query(`update memberships set state = 'removed' where realm_id = $1 and id = $2`, [
      k.realm.id,
      membership,
    ]);
    assert.equal(await codeOf(k, s.token, 'view', plain), 'NOT_PERMITTED');
    assert.equal(await codeOf(k, s.token, 'view', inOrg), 'NOT_PERMITTED');
    assert.deepEqual(await list(), []);
  });

  test('case=resource.org_id of an organization the subject is not live in is NOT_PERMITTED', async (t) => {
    const k = await kit(t);
    await put(k, 'doc', DOC);
    const org = await seedOrganization(k.h, k.realm);
    const s = await k.subject();
    // A realm-wide tuple: it would hold, but the check runs in an organization u is not in.
    await write(k, [tuple('doc:d', 'viewer', `user:${s.userId}`)]);
    assert.equal(await codeOf(k, s.token, 'view', { type: 'doc', id: 'd' }), 'ALLOWED');
    assert.equal(await codeOf(k, s.token, 'view', { type: 'doc', id: 'd', org_id: org }), 'NOT_PERMITTED');
    const listed = await k.post('/authorization/list-objects', {
      subject_token: s.token,
      action: 'view',
      resource_type: 'doc',
      org_id: org,
    });
    assert.deepEqual([listed.body.objects, listed.body.reason_code], [[], 'NOT_PERMITTED']);
    await seedMembership(k.h, k.realm, org, s.userId);
    assert.equal(await codeOf(k, s.token, 'view', { type: 'doc', id: 'd', org_id: org }), 'ALLOWED');
  });

  test('case=roles: organization roles need a live membership, realm roles still count', async (t) => {
    const k = await decisionKit(t);
    const orgRole = await k.role('org-editor', ['documents.edit']);
    const realmRole = await k.role('reader', ['documents.read']);
    const org = await seedOrganization(k.h, k.realm);
    const s = await k.subject();
    await k.assign(orgRole, { type: 'user', id: s.userId }, { type: 'organization', id: org });
    await k.assign(realmRole, { type: 'user', id: s.userId });
    const resource = { type: 'document', id: 'd1', org_id: org };
    assert.equal(await codeOf(k, s.token, 'documents.edit', resource), 'NOT_PERMITTED');
    assert.equal(await codeOf(k, s.token, 'documents.read', resource), 'ALLOWED');
    const membership = await seedMembership(k.h, k.realm, org, s.userId);
    assert.equal(await codeOf(k, s.token, 'documents.edit', resource), 'ALLOWED');
    await k.h.ctx.db.query(`update memberships set state = 'suspended' where realm_id = $1 and id = $2`, [
      k.realm.id,
      membership,
    ]);
    assert.equal(await codeOf(k, s.token, 'documents.edit', resource), 'NOT_PERMITTED');
  });

  test('case=service principals: tuples of organizations they may act in, while active', async (t) => {
    const k = await kit(t);
    await put(k, 'doc', DOC);
    const orgA = await seedOrganization(k.h, k.realm);
    const orgB = await seedOrganization(k.h, k.realm);
    const any = await k.principal();
    const onlyA = await k.principal({ allowedOrgIds: [orgA] });
    await write(k, [
      tuple('doc:a', 'viewer', `service_principal:${any.principalId}`, { org_id: orgA }),
      tuple('doc:a', 'viewer', `service_principal:${onlyA.principalId}`, { org_id: orgA }),
      tuple('doc:b', 'viewer', `service_principal:${any.principalId}`, { org_id: orgB }),
      tuple('doc:b', 'viewer', `service_principal:${onlyA.principalId}`, { org_id: orgB }),
    ]);
    const view = (token: string, id: string, org?: string) =>
      codeOf(k, token, 'view', { type: 'doc', id, ...(org ? { org_id: org } : {}) });
    assert.equal(await view(any.token, 'a'), 'ALLOWED');
    assert.equal(await view(any.token, 'b'), 'ALLOWED');
    assert.equal(await view(onlyA.token, 'a'), 'ALLOWED');
    assert.equal(await view(onlyA.token, 'b'), 'NOT_PERMITTED');
    assert.equal(await view(onlyA.token, 'b', orgB), 'NOT_PERMITTED');
    await k.h.ctx.db.query(`update organizations set state = 'suspended' where realm_id = $1 and id = $2`, [
      k.realm.id,
      orgA,
    ]);
    assert.equal(await view(any.token, 'a'), 'NOT_PERMITTED');
    assert.equal(await view(any.token, 'a', orgA), 'NOT_PERMITTED');
    assert.equal(await view(any.token, 'b', orgB), 'ALLOWED');
  });
});

describe('relationships › narrowed relations', () => {
  test('case=removing a subject type still used is 409; stray tuples of it are ignored', async (t) => {
    const k = await kit(t);
    const wide = { relations: { viewer: ['user', 'team#member'] }, permissions: { view: 'viewer' } };
    const narrow = { relations: { viewer: ['team#member'] }, permissions: { view: 'viewer' } };
    await put(k, 'team', { relations: { member: ['user'] }, permissions: { is: 'member' } });
    await put(k, 'doc', wide);
    const s = await k.subject();
    await write(k, [tuple('doc:d', 'viewer', `user:${s.userId}`)]);
    const r = await k.caller.call('PUT', '/authorization/types/doc', narrow);
    assert.equal(r.status, 409, await r.text());
    assert.equal(await codeOf(k, s.token, 'view', { type: 'doc', id: 'd' }), 'ALLOWED');

    // A tuple left behind (written around the API) no longer counts once the type is narrowed.
    await k.h.ctx.db.query(`update authz_types set relations = $3 where realm_id = $1 and name = $2`, [
      k.realm.id,
      'doc',
      JSON.stringify(narrow.relations),
    ]);
    await k.h.ctx.db.query('update realms set authz_revision = authz_revision + 1 where id = $1', [
      k.realm.id,
    ]);
    assert.equal(await codeOf(k, s.token, 'view', { type: 'doc', id: 'd' }), 'NOT_PERMITTED');
    await k.h.ctx.db.query(`update authz_types set relations = $3 where realm_id = $1 and name = $2`, [
      k.realm.id,
      'doc',
      JSON.stringify(wide.relations),
    ]);
    await k.h.ctx.db.query('update realms set authz_revision = authz_revision + 1 where id = $1', [
      k.realm.id,
    ]);

    await write(k, [], [tuple('doc:d', 'viewer', `user:${s.userId}`)]);
    await put(k, 'doc', narrow, 200);
  });
});

describe('relationships › read bounds', () => {
  test('case=a round reading too many tuples is an evaluation error', async (t) => {
    const k = await kit(t);
    await put(k, 'team', { relations: { member: ['user'] }, permissions: { is: 'member' } });
    await put(k, 'doc', { relations: { viewer: ['team#member'] }, permissions: { view: 'viewer' } });
    const s = await k.subject();
    await write(
      k,
      Array.from({ length: 11 }, (_, i) => tuple('doc:big', 'viewer', `team:t${i}#member`)),
    );
    // 11 teams of 1000 members each: the second round would read 11000 rows.
    await k.h.ctx.db.query(
      `insert into authz_tuples (realm_id, object_type, object_id, relation, subject_type, subject_id, subject_relation, created_at)
       select $1, 'team', 't' || (g / 1000), 'member', 'user', 'u' || g, '', now() from generate_series(0, 10999) g`,
      [k.realm.id],
    );
    const r = await k.check(checkBody(s.token, 'view', { type: 'doc', id: 'big' }));
    assert.deepEqual([r.body.reason_code, r.body.cache_ttl_seconds], ['EVALUATION_ERROR', 0]);
  });

  test('case=list-objects refuses a reach over 5000 objects', async (t) => {
    const k = await kit(t);
    await put(k, 'doc', DOC);
    const s = await k.subject();
    await k.h.ctx.db.query(
      `insert into authz_tuples (realm_id, object_type, object_id, relation, subject_type, subject_id, subject_relation, created_at)
       select $1, 'doc', 'd' || g, 'viewer', 'user', $2, '', now() from generate_series(1, 5001) g`,
      [k.realm.id, s.userId],
    );
    const r = await k.post('/authorization/list-objects', {
      subject_token: s.token,
      action: 'view',
      resource_type: 'doc',
    });
    assert.deepEqual([r.status, r.body.objects, r.body.reason_code], [200, [], 'EVALUATION_ERROR']);
    await k.h.ctx.db.query(`delete from authz_tuples where realm_id = $1 and object_id = 'd5001'`, [
      k.realm.id,
    ]);
    const ok = await k.post('/authorization/list-objects', {
      subject_token: s.token,
      action: 'view',
      resource_type: 'doc',
    });
    assert.equal((ok.body.objects as string[]).length, 100);
  });
});

describe('relationships › type cache', () => {
  test('case=a lower authorization revision (a restore) replaces the cached types', async (t) => {
    const k = await kit(t);
    await put(k, 'doc', {
      relations: { viewer: ['user'], editor: ['user'] },
      permissions: { view: 'viewer' },
    });
    const s = await k.subject();
    await write(k, [tuple('doc:d', 'viewer', `user:${s.userId}`)]);
    const doc = { type: 'doc', id: 'd' };
    assert.equal(await codeOf(k, s.token, 'view', doc), 'ALLOWED');
    const db = k.h.ctx.db;
    const rev = Number(
      (await db.query<{ r: string }>('select authz_revision as r from realms where id = $1', [k.realm.id]))
        .rows[0]?.r,
    );
    // The restored database has another model at an older revision...
    await db.query(`update authz_types set permissions = $2 where realm_id = $1 and name = 'doc'`, [
      k.realm.id,
      JSON.stringify({ view: 'editor' }),
    ]);
    await db.query('update realms set authz_revision = $2 where id = $1', [k.realm.id, rev - 1]);
    assert.equal(await codeOf(k, s.token, 'view', doc), 'NOT_PERMITTED');
    // ...and climbs back to the revision the cache saw before the restore.
    await db.query('update realms set authz_revision = $2 where id = $1', [k.realm.id, rev]);
    assert.equal(await codeOf(k, s.token, 'view', doc), 'NOT_PERMITTED');
  });
});
