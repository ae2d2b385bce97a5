// POST /authorization/check with roles (docs/authorization.md, evaluation steps 1 to 5).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../../src/platform/ids.ts';
import { authorizationChanged } from '../../../src/roles/authz-revision.ts';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import { checkBody, decisionKit } from './decision-kit.ts';

describe('decisions › roles', () => {
  test('case=a realm role allows its permission and nothing else', async (t) => {
    const k = await decisionKit(t);
    const role = await k.role('editor', ['documents.edit']);
    const { userId, token } = await k.subject();
    await k.assign(role, { type: 'user', id: userId });
    const yes = await k.check(checkBody(token, 'documents.edit'));
    assert.equal(yes.status, 200);
    assert.equal(yes.body.allowed, true);
    assert.equal(yes.body.reason_code, 'ALLOWED');
    assert.match(String(yes.body.decision_id), /^dec_[0-9a-z]{26}$/);
    assert.match(String(yes.body.policy_version), /^\d+\.\d+$/);
    assert.deepEqual(yes.body.obligations, []);
    assert.ok(Number(yes.body.cache_ttl_seconds) > 0 && Number(yes.body.cache_ttl_seconds) <= 30);
    const no = await k.check(checkBody(token, 'documents.delete'));
    assert.deepEqual([no.body.allowed, no.body.reason_code], [false, 'NOT_PERMITTED']);
  });

  test('case=the cache lifetime never outlives the subject token', async (t) => {
    const k = await decisionKit(t, { tokenTtlSeconds: 30 });
    const role = await k.role('reader', ['documents.read']);
    const { userId, token } = await k.subject();
    await k.assign(role, { type: 'user', id: userId });
    const r = await k.check(checkBody(token, 'documents.read'));
    assert.equal(r.body.reason_code, 'ALLOWED');
    assert.ok(Number(r.body.cache_ttl_seconds) <= 30);
  });

  test('case=a caller without realm.authorization.check is refused', async (t) => {
    const k = await decisionKit(t, { callerRoles: [] });
    const { token } = await k.subject();
    const r = await k.check(checkBody(token, 'documents.read'));
    assert.equal(r.status, 403);
  });

  test('case=the caller is checked live in the decision statement: refused before any answer', async (t) => {
    // Without the permission: refused on single and batch calls, also when every subject token is garbage.
    const bare = await decisionKit(t, { callerRoles: [] });
    assert.equal((await bare.check(checkBody('garbage', 'documents.read'))).status, 403);
    const batch = await bare.post('/authorization/check-batch', { checks: [checkBody('garbage', 'x.y')] });
    assert.equal(batch.status, 403);
    // A caller whose session ended after its token was issued: 401, not a decision.
    const k = await decisionKit(t);
    const { token } = await k.subject();
    assert.equal((await k.check(checkBody(token, 'documents.read'))).status, 200);
    await k.h.ctx.db.query('update sessions set revoked_at = now() where realm_id = $1 and id = $2', [
      k.realm.id,
      k.caller.sessionId,
    ]);
    const ended = await k.check(checkBody(token, 'documents.read'));
    assert.equal(ended.status, 401);
    assert.equal(ended.body.allowed, undefined);
    const endedBatch = await k.post('/authorization/check-batch', {
      checks: [checkBody(token, 'documents.read')],
    });
    assert.equal(endedBatch.status, 401);
  });

  test('case=roles through groups (with ancestors) and composite roles count', async (t) => {
    const k = await decisionKit(t);
    const db = k.h.ctx.db;
    const inner = await k.role('viewer', ['documents.read']);
    const outer = await k.role('contributor', ['documents.write'], ['viewer']);
    const parent = newId('grp');
    const child = newId('grp');
    await db.query(
      `insert into groups (realm_id, id, parent_id, depth, name, created_at, updated_at)
       values ($1, $2, null, 1, 'parent', now(), now()), ($1, $3, $2, 2, 'child', now(), now())`,
      [k.realm.id, parent, child],
    );
    const { userId, token } = await k.subject();
    await db.query(
      `insert into group_members (realm_id, group_id, subject_type, subject_id, created_at) values ($1, $2, 'user', $3, now())`,
      [k.realm.id, child, userId],
    );
    await k.assign(outer, { type: 'group', id: parent });
    assert.equal(inner.length > 0, true);
    for (const action of ['documents.write', 'documents.read']) {
      const r = await k.check(checkBody(token, action));
      assert.equal(r.body.reason_code, 'ALLOWED', action);
    }
  });

  test('case=policy_version moves when a role is assigned', async (t) => {
    const k = await decisionKit(t);
    const role = await k.role('editor', ['documents.edit']);
    const { userId, token } = await k.subject();
    const before = await k.check(checkBody(token, 'documents.edit'));
    assert.equal(before.body.reason_code, 'NOT_PERMITTED');
    await k.h.ctx.db.tx(async (tx) => {
      await tx.query(
        `insert into role_assignments (realm_id, id, role_id, subject_type, subject_id, scope_type, scope_id, source, created_at)
         values ($1, $2, $3, 'user', $4, 'realm', '', 'test', now())`,
        [k.realm.id, newId('ras'), role, userId],
      );
      await authorizationChanged(tx, k.realm.id, [{ type: 'user', id: userId }]);
    });
    const after = await k.check(checkBody(token, 'documents.edit'));
    assert.equal(after.body.reason_code, 'ALLOWED');
    assert.notEqual(after.body.policy_version, before.body.policy_version);
  });

  test('case=opaque subject tokens are checked like JWTs', async (t) => {
    const k = await decisionKit(t);
    const role = await k.role('editor', ['documents.edit']);
    const { userId, token } = await k.subject({ opaque: true });
    await k.assign(role, { type: 'user', id: userId });
    const r = await k.check(checkBody(token, 'documents.edit'));
    assert.equal(r.body.reason_code, 'ALLOWED');
  });
});

describe('decisions › inactive subjects', () => {
  test('case=garbage, expired, revoked-session and suspended-account tokens are inactive', async (t) => {
    let offsetMs = 0;
    const clock = { now: () => new Date(Date.now() + offsetMs) };
    const k = await decisionKit(t, { clock, tokenTtlSeconds: 30 });
    const role = await k.role('editor', ['documents.edit']);
    const inactive = async (token: string) => {
      const r = await k.check(checkBody(token, 'documents.edit'));
      assert.equal(r.status, 200);
      assert.deepEqual([r.body.allowed, r.body.reason_code], [false, 'SUBJECT_TOKEN_INACTIVE']);
      assert.deepEqual(r.body.obligations, []);
    };
    await inactive('not-a-token');
    await inactive('eyJhbGciOiJSUzI1NiJ9.e30.AAAA');

    const revoked = await k.subject();
    await k.assign(role, { type: 'user', id: revoked.userId });
    assert.equal((await k.check(checkBody(revoked.token, 'documents.edit'))).body.reason_code, 'ALLOWED');
    await k.h.ctx.db.query('update sessions set revoked_at = now() where realm_id = $1 and id = $2', [
      k.realm.id,
      revoked.sessionId,
    ]);
    await inactive(revoked.token);

    const suspended = await k.subject();
    await k.assign(role, { type: 'user', id: suspended.userId });
    await k.h.ctx.db.query(`update users set state = 'suspended' where realm_id = $1 and id = $2`, [
      k.realm.id,
      suspended.userId,
    ]);
    await inactive(suspended.token);

    const pending = await k.subject();
    await k.assign(role, { type: 'user', id: pending.userId });
    await k.h.ctx.db.query(
      `update users set state = 'pending_verification' where realm_id = $1 and id = $2`,
      [k.realm.id, pending.userId],
    );
    await inactive(pending.token);

    const expiring = await k.subject();
    await k.assign(role, { type: 'user', id: expiring.userId });
    // Past the token's expiry and the 60 s clock tolerance; the caller's token is refreshed.
    offsetMs = 5 * 60 * 1000;
    await inactive(expiring.token);
  });
});

describe('decisions › organizations and projects', () => {
  test('case=an organization-scope role counts only in its organization', async (t) => {
    const k = await decisionKit(t);
    const role = await k.role('org-editor', ['documents.edit']);
    const orgA = await seedOrganization(k.h, k.realm);
    const orgB = await seedOrganization(k.h, k.realm);
    const plain = await k.subject();
    await seedMembership(k.h, k.realm, orgA, plain.userId);
    await seedMembership(k.h, k.realm, orgB, plain.userId);
    await k.assign(role, { type: 'user', id: plain.userId }, { type: 'organization', id: orgA });
    const inOrg = (org: string | null, token = plain.token) =>
      k.check(
        checkBody(token, 'documents.edit', { type: 'document', id: 'd1', ...(org ? { org_id: org } : {}) }),
      );
    assert.equal((await inOrg(orgA)).body.reason_code, 'ALLOWED');
    assert.equal((await inOrg(orgB)).body.reason_code, 'NOT_PERMITTED');
    assert.equal((await inOrg(null)).body.reason_code, 'NOT_PERMITTED');

    // A token bound to an organization decides in it, and refuses a resource of another one.
    const bound = await k.subject({ userId: plain.userId, orgId: orgA });
    assert.equal((await inOrg(null, bound.token)).body.reason_code, 'ALLOWED');
    assert.equal((await inOrg(orgA, bound.token)).body.reason_code, 'ALLOWED');
    assert.equal((await inOrg(orgB, bound.token)).body.reason_code, 'ORGANIZATION_MISMATCH');
    const boundB = await k.subject({ userId: plain.userId, orgId: orgB });
    assert.equal((await inOrg(null, boundB.token)).body.reason_code, 'NOT_PERMITTED');
  });

  test('case=a suspended membership or organization makes an organization token inactive', async (t) => {
    const k = await decisionKit(t);
    const role = await k.role('editor', ['documents.edit']);
    const org = await seedOrganization(k.h, k.realm);
    const s = await k.subject();
    const membership = await seedMembership(k.h, k.realm, org, s.userId);
    await k.assign(role, { type: 'user', id: s.userId });
    const bound = await k.subject({ userId: s.userId, orgId: org });
    assert.equal((await k.check(checkBody(bound.token, 'documents.edit'))).body.reason_code, 'ALLOWED');
    const db = k.h.ctx.db;
    await db.query(`update memberships set state = 'suspended' where realm_id = $1 and id = $2`, [
      k.realm.id,
      membership,
    ]);
    assert.equal(
      (await k.check(checkBody(bound.token, 'documents.edit'))).body.reason_code,
      'SUBJECT_TOKEN_INACTIVE',
    );
    await db.query(`update memberships set state = 'active' where realm_id = $1 and id = $2`, [
      k.realm.id,
      membership,
    ]);
    await db.query(`update organizations set state = 'suspended' where realm_id = $1 and id = $2`, [
      k.realm.id,
      org,
    ]);
    assert.equal(
      (await k.check(checkBody(bound.token, 'documents.edit'))).body.reason_code,
      'SUBJECT_TOKEN_INACTIVE',
    );
  });

  test('case=projects: unknown, owned by another organization, and project-scope roles', async (t) => {
    const k = await decisionKit(t);
    const role = await k.role('deployer', ['deployments.create']);
    const orgA = await seedOrganization(k.h, k.realm);
    const orgB = await seedOrganization(k.h, k.realm);
    const s = await k.subject();
    await seedMembership(k.h, k.realm, orgA, s.userId);
    const project = newId('prj');
    await k.h.ctx.db.query(
      `insert into projects (realm_id, id, name, environment, state, owner_organization_id, created_at, updated_at)
       values ($1, $2, 'web', 'production', 'active', $3, now(), now())`,
      [k.realm.id, project, orgA],
    );
    await k.assign(role, { type: 'user', id: s.userId }, { type: 'project', id: project });
    const inProject = (projectId: string, orgId?: string) =>
      k.check(
        checkBody(s.token, 'deployments.create', {
          type: 'deployment',
          id: 'x',
          project_id: projectId,
          ...(orgId ? { org_id: orgId } : {}),
        }),
      );
    assert.equal((await inProject('prj_unknown', orgA)).body.reason_code, 'UNKNOWN_PROJECT');
    assert.equal((await inProject(project, orgB)).body.reason_code, 'PROJECT_ORGANIZATION_MISMATCH');
    assert.equal((await inProject(project)).body.reason_code, 'PROJECT_ORGANIZATION_MISMATCH');
    assert.equal((await inProject(project, orgA)).body.reason_code, 'ALLOWED');
    // Outside the project the role gives nothing.
    const outside = await k.check(
      checkBody(s.token, 'deployments.create', { type: 'deployment', id: 'x', org_id: orgA }),
    );
    assert.equal(outside.body.reason_code, 'NOT_PERMITTED');
    await k.h.ctx.db.query(`update projects set state = 'archived' where realm_id = $1 and id = $2`, [
      k.realm.id,
      project,
    ]);
    assert.equal((await inProject(project, orgA)).body.reason_code, 'UNKNOWN_PROJECT');
  });
});
