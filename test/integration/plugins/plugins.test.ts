// Plugins (docs/plugins.md): a version uploaded by one administrator installs its hook, webhook
// subscription and workflow only after another administrator approves it (extensions.plugin_review
// second_admin, the default); the objects carry plugin_id and answer 409 to direct changes;
// upgrade and uninstall replace and remove them as one unit; the package limits answer 422.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { hookSetup, type Json, receiverUrl } from '../hooks/hooks-kit.ts';
import { createRole } from '../roles/roles-kit.ts';
import { json } from '../webhooks/webhook-kit.ts';

type Setup = Awaited<ReturnType<typeof hookSetup>>;

const fieldsOf = (body: Json) =>
  ((body.errors ?? []) as { field: string; code: string }[]).map((e) => `${e.field}:${e.code}`);

function pkg(s: Setup, version = '1.0.0', extra: Json = {}): Json {
  const url = receiverUrl(s.receiver);
  return {
    manifest: {
      name: 'welcome-kit',
      version,
      description: 'greets new accounts',
      permissions: ['realm.users.read'],
    },
    payload: {
      hooks: [{ name: `kit hook ${version}`, kind: 'after_sign_in', url, allow_private_network: true }],
      subscriptions: [
        {
          name: `kit feed ${version}`,
          destination_url: url,
          event_types: ['user.created'],
          allow_private_network: true,
        },
      ],
      workflows: [
        {
          name: `kit flow ${version}`,
          triggers: [{ type: 'event', event_type: 'user.created' }],
          steps: [{ kind: 'revoke_sessions' }],
        },
      ],
    },
    ...extra,
  };
}

async function upload(admin: Setup['admin'], body: Json): Promise<Json> {
  const res = await admin.call('POST', '/plugins', body);
  const out = await json(res);
  assert.equal(res.status, 201, JSON.stringify(out));
  return out;
}

const managedCounts = async (s: Setup, pluginId: string) => {
  const q = async (sql: string) =>
    Number((await s.h.ctx.db.query<{ n: number }>(sql, [s.realm.id, pluginId])).rows[0]!.n);
  return {
    hooks: await q('select count(*)::int as n from hooks where realm_id = $1 and plugin_id = $2'),
    subscriptions: await q(
      'select count(*)::int as n from webhook_subscriptions where realm_id = $1 and plugin_id = $2 and deleted_at is null',
    ),
    workflows: await q(
      'select count(*)::int as n from workflows where realm_id = $1 and plugin_id = $2 and deleted_at is null',
    ),
  };
};

describe('plugins › reviewed installation', () => {
  test('case=uploaded by A, refused until B approves; installs three objects with plugin_id; 409 to direct changes; uninstall removes them', async (t) => {
    const s = await hookSetup(t);
    const a = s.admin;
    const b = await apiCaller(s.h, s.realm);
    const v1 = await upload(a, pkg(s));
    assert.equal(v1.state, 'uploaded');
    const pluginId = String(v1.plugin_id);
    const base = `/plugins/${pluginId}/versions/${v1.id}`;

    const early = await a.call('POST', `${base}/install`);
    assert.equal(early.status, 409);
    assert.match(String((await json(early)).detail), /not approved/);

    const self = await a.call('POST', `${base}/approve`);
    assert.equal(self.status, 403);
    const selfBody = await json(self);
    assert.equal(selfBody.code, 'forbidden');
    assert.match(String(selfBody.detail), /second_admin/);
    assert.deepEqual(await managedCounts(s, pluginId), { hooks: 0, subscriptions: 0, workflows: 0 });

    const approved = await b.call('POST', `${base}/approve`);
    assert.equal(approved.status, 200);
    const ab = await json(approved);
    assert.deepEqual([ab.state, (ab.approved_by as Json).id], ['approved', b.userId]);
    assert.equal((await b.call('POST', `${base}/approve`)).status, 409);

    const installed = await a.call('POST', `${base}/install`);
    const inst = await json(installed);
    assert.equal(installed.status, 200, JSON.stringify(inst));
    assert.equal(installed.headers.get('cache-control'), 'no-store');
    assert.equal((inst.plugin as Json).installed_version_id, v1.id);
    const [hook] = inst.hooks as Json[];
    const [sub] = inst.subscriptions as Json[];
    const [flow] = inst.workflows as Json[];
    assert.match(String(hook!.signing_secret), /^whsec_/);
    assert.match(String(sub!.signing_secret), /^whsec_/);
    assert.deepEqual(await managedCounts(s, pluginId), { hooks: 1, subscriptions: 1, workflows: 1 });

    // Each object shows its plugin and refuses a direct change or deletion.
    assert.equal((await json(await a.call('GET', `/hooks/${hook!.id}`))).plugin_id, pluginId);
    assert.equal((await json(await a.call('GET', `/webhooks/${sub!.id}`))).plugin_id, pluginId);
    assert.equal((await json(await a.call('GET', `/workflows/${flow!.id}`))).plugin_id, pluginId);
    const direct: [string, string, Json | undefined][] = [
      ['PATCH', `/hooks/${hook!.id}`, { timeout_ms: 500 }],
      ['DELETE', `/hooks/${hook!.id}`, undefined],
      ['POST', `/hooks/${hook!.id}/rotate-secret`, undefined],
      ['PATCH', `/webhooks/${sub!.id}`, { name: 'mine now' }],
      ['DELETE', `/webhooks/${sub!.id}`, undefined],
      ['PUT', `/workflows/${flow!.id}`, (pkg(s).payload as { workflows: Json[] }).workflows[0]],
      ['DELETE', `/workflows/${flow!.id}`, undefined],
    ];
    for (const [method, path, body] of direct) {
      const res = await a.call(method, path, body);
      assert.equal(res.status, 409, `${method} ${path}`);
      assert.equal((await json(res)).code, 'conflict');
    }
    assert.equal((await a.call('POST', `${base}/install`)).status, 409, 'installed already');

    const audit = await s.h.ctx.db.query<{ type: string }>(
      'select type from audit_events where realm_id = $1 and target_id = $2 order by occurred_at, id',
      [s.realm.id, pluginId],
    );
    assert.deepEqual(
      audit.rows.map((r) => r.type),
      ['plugin.version_uploaded', 'plugin.version_approved', 'plugin.installed'],
    );

    const gone = await a.call('POST', `/plugins/${pluginId}/uninstall`);
    assert.equal(gone.status, 200);
    assert.equal((await json(gone)).installed_version_id, null);
    assert.deepEqual(await managedCounts(s, pluginId), { hooks: 0, subscriptions: 0, workflows: 0 });
    assert.equal((await a.call('GET', `/hooks/${hook!.id}`)).status, 404);
    assert.equal((await a.call('GET', `/webhooks/${sub!.id}`)).status, 404);
    assert.equal((await a.call('GET', `/workflows/${flow!.id}`)).status, 404);
    assert.equal((await a.call('POST', `/plugins/${pluginId}/uninstall`)).status, 409);
    // The versions are kept.
    const read = await json(await a.call('GET', `/plugins/${pluginId}`));
    assert.deepEqual(
      (read.versions as Json[]).map((v) => v.state),
      ['approved'],
    );
  });

  test('case=upgrade replaces the objects as one unit; an older version is refused', async (t) => {
    const s = await hookSetup(t);
    const b = await apiCaller(s.h, s.realm);
    const v1 = await upload(s.admin, pkg(s, '1.0.0'));
    const pluginId = String(v1.plugin_id);
    const v2 = await upload(s.admin, pkg(s, '1.1.0'));
    assert.equal(v2.plugin_id, pluginId);
    assert.equal((await s.admin.call('POST', '/plugins', pkg(s, '1.1.0'))).status, 409, 'same version twice');
    for (const v of [v1, v2])
      assert.equal((await b.call('POST', `/plugins/${pluginId}/versions/${v.id}/approve`)).status, 200);
    const first = await json(await s.admin.call('POST', `/plugins/${pluginId}/versions/${v1.id}/install`));
    const up = await s.admin.call('POST', `/plugins/${pluginId}/versions/${v2.id}/install`);
    const upBody = await json(up);
    assert.equal(up.status, 200, JSON.stringify(upBody));
    assert.notEqual((upBody.hooks as Json[])[0]!.id, (first.hooks as Json[])[0]!.id);
    assert.deepEqual(await managedCounts(s, pluginId), { hooks: 1, subscriptions: 1, workflows: 1 });
    const names = await s.h.ctx.db.query<{ name: string }>(
      'select name from workflows where realm_id = $1 and plugin_id = $2 and deleted_at is null',
      [s.realm.id, pluginId],
    );
    assert.deepEqual(names.rows, [{ name: 'kit flow 1.1.0' }]);
    const down = await s.admin.call('POST', `/plugins/${pluginId}/versions/${v1.id}/install`);
    assert.equal(down.status, 409);
  });

  test('case=single_admin lets the uploader approve', async (t) => {
    const s = await hookSetup(t);
    await s.h.setPolicy(s.realm, { extensions: { plugin_review: 'single_admin' } });
    const v = await upload(s.admin, pkg(s));
    const res = await s.admin.call('POST', `/plugins/${v.plugin_id}/versions/${v.id}/approve`);
    assert.equal(res.status, 200);
    assert.equal((await json(res)).state, 'approved');
  });

  test('case=limits and item rules answer 422 naming the member; nothing is stored', async (t) => {
    const s = await hookSetup(t);
    const one = pkg(s);
    const payload = one.payload as { hooks: Json[]; subscriptions: Json[]; workflows: Json[] };
    const manifest = one.manifest as Json;
    const times = <T>(n: number, f: (i: number) => T) => Array.from({ length: n }, (_, i) => f(i));
    const cases: [Json, number, string[]][] = [
      [{ manifest: { ...manifest, description: 'x'.repeat(17_000) }, payload }, 422, ['manifest:too_long']],
      [
        {
          manifest,
          payload: { ...payload, hooks: times(21, (i) => ({ ...payload.hooks[0], name: `h${i}` })) },
        },
        422,
        ['payload.hooks:too_many'],
      ],
      [
        { manifest, payload: { subscriptions: times(21, () => payload.subscriptions[0]) } },
        422,
        ['payload.subscriptions:too_many'],
      ],
      [
        { manifest, payload: { workflows: times(21, () => payload.workflows[0]) } },
        422,
        ['payload.workflows:too_many'],
      ],
      [
        { manifest: { ...manifest, dependencies: times(11, (i) => `dep${i}`) }, payload },
        422,
        ['manifest.dependencies:too_many'],
      ],
      [
        { manifest: { ...manifest, permissions: times(51, (i) => `p${i}`) }, payload },
        422,
        ['manifest.permissions:too_many'],
      ],
      [
        { manifest: { ...manifest, permissions: ['realm.everything'] }, payload },
        422,
        ['manifest.permissions[0]:not_allowed'],
      ],
      [{ manifest: { ...manifest, version: '1.0.x' }, payload }, 422, ['manifest.version:pattern']],
      [
        { manifest, payload: { hooks: [{ ...payload.hooks[0], timeout_ms: 99 }] } },
        422,
        ['payload.hooks[0].timeout_ms:too_small'],
      ],
      [
        { manifest, payload: { workflows: [{ ...payload.workflows[0], steps: [] }] } },
        422,
        ['payload.workflows[0].steps:too_few'],
      ],
      [
        { manifest, payload: { hooks: [{ ...payload.hooks[0], secret: 'x' }] } },
        400,
        ['payload.hooks[0].secret:unknown_member'],
      ],
    ];
    for (const [body, status, fields] of cases) {
      const res = await s.admin.call('POST', '/plugins', body);
      const answer = await json(res);
      assert.equal(res.status, status, JSON.stringify(answer).slice(0, 400));
      assert.deepEqual(fieldsOf(answer), fields, JSON.stringify(answer).slice(0, 400));
    }
    const big = {
      manifest,
      payload: { hooks: [{ ...payload.hooks[0], name: 'x'.repeat(200) }], pad: 'x'.repeat(170_000) },
    };
    const res = await s.admin.call('POST', '/plugins', big);
    assert.equal(res.status, 422);
    assert.deepEqual(fieldsOf(await json(res)), ['payload:too_long']);
    assert.deepEqual((await json(await s.admin.call('GET', '/plugins'))).items, []);
  });

  test('case=reads need realm.plugins.read, uploads realm.plugins.write, approval realm.plugins.review', async (t) => {
    const s = await hookSetup(t);
    const plain = await apiCaller(s.h, s.realm, { roles: [] });
    assert.equal((await plain.call('GET', '/plugins')).status, 403);
    assert.equal((await plain.call('POST', '/plugins', pkg(s))).status, 403);
    const v = await upload(s.admin, pkg(s));
    assert.equal((await plain.call('POST', `/plugins/${v.plugin_id}/versions/${v.id}/approve`)).status, 403);
  });
  test('case=dependencies must be installed first and keep their dependents; manifest permissions must be held', async (t) => {
    const s = await hookSetup(t);
    const b = await apiCaller(s.h, s.realm);
    const approve = async (v: Json) =>
      assert.equal((await b.call('POST', `/plugins/${v.plugin_id}/versions/${v.id}/approve`)).status, 200);
    const install = (v: Json) => s.admin.call('POST', `/plugins/${v.plugin_id}/versions/${v.id}/install`);
    const base = { version: '1.0.0', permissions: [] };
    const lib = await upload(s.admin, { manifest: { ...base, name: 'lib' }, payload: {} });
    const app = await upload(s.admin, {
      manifest: { ...base, name: 'app', dependencies: ['lib'] },
      payload: {},
    });
    await approve(lib);
    await approve(app);
    const early = await install(app);
    assert.equal(early.status, 409);
    assert.match(String((await json(early)).detail), /lib/);
    assert.equal((await install(lib)).status, 200);
    assert.equal((await install(app)).status, 200);
    const held = await s.admin.call('POST', `/plugins/${lib.plugin_id}/uninstall`);
    assert.equal(held.status, 409);
    assert.match(String((await json(held)).detail), /app/);

    // An installer with realm.plugins.write only does not hold realm.users.read.
    await createRole(s.admin, { name: 'plugin-installer', permissions: ['realm.plugins.write'] });
    const narrow = await apiCaller(s.h, s.realm, { roles: ['plugin-installer'] });
    const wants = await upload(s.admin, {
      manifest: { ...base, name: 'wants', permissions: ['realm.users.read'] },
      payload: {},
    });
    await approve(wants);
    const refused = await narrow.call('POST', `/plugins/${wants.plugin_id}/versions/${wants.id}/install`);
    assert.equal(refused.status, 403);
    assert.match(String((await json(refused)).detail), /realm\.users\.read/);
    assert.equal((await install(wants)).status, 200);
  });
});
