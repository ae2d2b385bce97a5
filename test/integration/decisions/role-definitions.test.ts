// Role definitions are kept in memory per realm (src/roles/role-definitions.ts); a change to a
// role counts from the very next decision, in the server that made it and in any other server
// sharing the database, whatever wrote it (the roles API, or SQL no server saw).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { checkBody, decisionKit, tuple } from './decision-kit.ts';

const json = async (res: Response) => {
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
};

describe('decisions › role definitions kept in memory', () => {
  test('case=a permission, composite or deletion counts from the next decision on every server', async (t) => {
    const k = await decisionKit(t);
    // A second server context on the same database.
    const other = await startHarness(t);
    const admin = await apiCaller(k.h, k.realm);
    const on = (h: Harness, token: string, method: string, path: string, body?: unknown) =>
      fetch(`${h.publicUrl}/api/v1/realms/${k.realm.name}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }).then(json);
    const write = async (h: Harness, method: string, path: string, body?: unknown) => {
      const r = await on(h, admin.token, method, path, body);
      assert.ok(r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    };
    const { userId, token } = await k.subject();
    // What the subject may do, asked of each server: the actions allowed, in order.
    const allowed = async (h: Harness) => {
      const out: string[] = [];
      for (const action of ['documents.read', 'documents.edit']) {
        const r = await on(h, k.caller.token, 'POST', '/authorization/check', checkBody(token, action));
        assert.equal(r.status, 200, JSON.stringify(r.body));
        if (r.body.allowed === true) out.push(action);
      }
      return out;
    };
    const both = async () => [await allowed(k.h), await allowed(other)];

    await write(k.h, 'POST', '/permissions', { name: 'documents.read' });
    await write(k.h, 'POST', '/permissions', { name: 'documents.edit' });
    const reader = String(
      (await write(k.h, 'POST', '/roles', { name: 'reader', permissions: ['documents.read'] })).id,
    );
    const bundle = String(
      (await write(k.h, 'POST', '/roles', { name: 'bundle', composite_role_ids: [reader] })).id,
    );
    await k.assign(bundle, { type: 'user', id: userId });
    assert.deepEqual(await both(), [['documents.read'], ['documents.read']]);

    // A permission change made through the other server.
    await write(other, 'PUT', `/roles/${reader}`, { name: 'reader', permissions: ['documents.edit'] });
    assert.deepEqual(await allowed(k.h), ['documents.edit']);
    assert.deepEqual(await allowed(other), ['documents.edit']);

    // A composite change made through this server, seen first by the other.
    await write(k.h, 'PUT', `/roles/${bundle}`, { name: 'bundle', composite_role_ids: [] });
    assert.deepEqual(await allowed(other), []);
    assert.deepEqual(await allowed(k.h), []);

    // Changes no server made (SQL), both kinds.
    await k.h.ctx.db.query('update roles set composite_role_ids = $3 where realm_id = $1 and id = $2', [
      k.realm.id,
      bundle,
      [reader],
    ]);
    assert.deepEqual(await both(), [['documents.edit'], ['documents.edit']]);
    await k.h.ctx.db.query('update roles set permissions = $3 where realm_id = $1 and id = $2', [
      k.realm.id,
      reader,
      ['documents.read', 'documents.edit'],
    ]);
    assert.deepEqual(await both(), [
      ['documents.read', 'documents.edit'],
      ['documents.read', 'documents.edit'],
    ]);

    // Deleting the role the composite held: nothing through it any more.
    await write(other, 'DELETE', `/roles/${reader}`);
    assert.deepEqual(await both(), [[], []]);
  });

  test('case=a role created and assigned after a decision counts from the next one', async (t) => {
    const k = await decisionKit(t);
    const { userId, token } = await k.subject();
    const ask = async () => (await k.check(checkBody(token, 'reports.export'))).body.allowed;
    assert.equal(await ask(), false);
    const role = await k.role('exporter', ['reports.export']);
    await k.assign(role, { type: 'user', id: userId });
    assert.equal(await ask(), true);
  });

  test('case=a role check is one statement; a type that became a relationship type costs one more, once', async (t) => {
    const k = await decisionKit(t, { callerRoles: ['realm-admin'] });
    const { userId, token } = await k.subject();
    await k.assign(await k.role('reader', ['documents.read']), { type: 'user', id: userId });
    const db = k.h.ctx.db;
    const query = db.query.bind(db);
    let liveChecks = 0;
    (db as { query: typeof db.query }).query = (sql, params) => {
      if (sql.includes('token_revocations')) liveChecks++;
      return query(sql, params);
    };
    t.after(() => {
      (db as { query: typeof db.query }).query = query;
    });
    const ask = async (action: string, resource: Record<string, unknown>) => {
      liveChecks = 0;
      const r = await k.check(checkBody(token, action, resource));
      return [r.body.reason_code, liveChecks];
    };
    assert.deepEqual(await ask('documents.read', { type: 'folder', id: 'f1' }), ['ALLOWED', 1]);
    assert.deepEqual(await ask('view', { type: 'folder', id: 'f1' }), ['NOT_PERMITTED', 1]);
    const folder = { relations: { viewer: ['user'] }, permissions: { view: 'viewer' } };
    assert.equal((await k.caller.call('PUT', '/authorization/types/folder', folder)).status, 201);
    const written = await k.post('/authorization/tuples', {
      writes: [tuple('folder:f1', 'viewer', `user:${userId}`)],
    });
    assert.equal(written.status, 200);
    // The process took folder for a role check's type: the statement says otherwise, asked again.
    assert.deepEqual(await ask('view', { type: 'folder', id: 'f1' }), ['ALLOWED', 2]);
    assert.deepEqual(await ask('view', { type: 'folder', id: 'f1' }), ['ALLOWED', 1]);
    assert.deepEqual(await ask('view', { type: 'folder', id: 'f2' }), ['NOT_PERMITTED', 1]);
  });
});
