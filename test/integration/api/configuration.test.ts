// Configuration as code (spec doc 1, Configuration document; Import semantics; Endpoints:
// Configuration): the plan and each error kind, create-only and reconcile imports, dry runs, one
// transaction for the whole apply, the policy revision between plan and apply, and who may do it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { importConfiguration } from '../../../src/configuration/config-import.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { REALM_PERMISSIONS } from '../../../src/roles/permissions.ts';
import { type ApiCallerKit, apiCaller, assignRoles } from '../../harness/api-kit.ts';
import { ORDERS, sampleDocument } from '../../harness/config-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';

type Json = Record<string, unknown>;
type Ctx = Parameters<typeof startHarness>[0];

async function setup(t: Ctx) {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  return { h, realm, admin };
}

const json = async (res: Response) => (await res.json()) as Json;

const errorsOf = (plan: Json) =>
  (plan.errors as { path: string; code: string }[]).map((e) => `${e.path}:${e.code}`);

async function count(h: Harness, realm: RealmRow, table: string) {
  const r = await h.ctx.db.query<{ n: number }>(
    `select count(*)::int as n from ${table} where realm_id = $1`,
    [realm.id],
  );
  return Number(r.rows[0]?.n);
}

async function revision(h: Harness, realm: RealmRow) {
  const r = await h.ctx.db.query<{ policy_revision: number }>(
    'select policy_revision from realms where id = $1',
    [realm.id],
  );
  return Number(r.rows[0]?.policy_revision);
}

async function callerWith(
  h: Harness,
  realm: RealmRow,
  admin: ApiCallerKit,
  name: string,
  permissions: string[],
) {
  const r = await admin.call('POST', '/roles', { name, permissions });
  assert.equal(r.status, 201, JSON.stringify(await r.clone().json()));
  return apiCaller(h, realm, { roles: [name] });
}

describe('configuration › plan', () => {
  test('case=validate answers 200 with create lists for a fresh realm', async (t) => {
    const { admin } = await setup(t);
    const res = await admin.call('POST', '/configuration/validate', sampleDocument());
    assert.equal(res.status, 200);
    const plan = await json(res);
    assert.deepEqual(plan.errors, []);
    assert.equal(plan.valid, true);
    assert.deepEqual(plan.policy, {
      action: 'update',
      current_revision: 1,
      sections: ['data_access', 'mfa'],
    });
    assert.deepEqual(plan.resources, { create: [ORDERS], update: [], unchanged: [], differs: [] });
    assert.deepEqual((plan.clients as Json).create, ['shop-web', 'billing']);
    assert.deepEqual(plan.permissions, {
      create: ['orders.refund'],
      update: [],
      unchanged: ['realm.users.read'],
      differs: [],
    });
    assert.deepEqual((plan.roles as Json).create, ['refunder']);
    assert.equal(((plan.client_resource_grants as Json).create as unknown[]).length, 3);
    assert.deepEqual(plan.missing_permissions, []);
  });

  test('case=each kind of plan error is reported at its JSON pointer, still with 200', async (t) => {
    const { h, realm, admin } = await setup(t);
    await h.setPolicy(realm, { audit: { retention_days: 30 } }); // revision 2
    const doc = {
      format: 'service.realm-config.v2',
      surprise: true,
      policy: { login: { password: false }, webauthn: { rp_id: 'example.com' } },
      expected_policy_revision: 1,
      resources: [
        { name: 'Orders', audience: ORDERS, scopes: [{ name: 'orders:read' }] },
        { name: 'Again', audience: ORDERS },
        { name: 'Bad', audience: 'ftp://nope' },
      ],
      clients: [
        { client_id: 'web', name: 'Web', type: 'web', redirect_uris: ['https://web.example/cb'] },
        { client_id: 'bad-web', name: 'Web', type: 'web', redirect_uris: ['http://evil.example/cb'] },
        { client_id: 'svc', name: 'Svc', type: 'service', service_principal_id: 'spr_123' },
      ],
      permissions: [{ name: 'realm.made.up' }],
      roles: [
        { name: 'r1', permissions: ['orders.unknown'] },
        { name: 'r2', organization_id: 'org_1' },
        { name: 'r3', composite_role_ids: ['rol_1'] },
      ],
      client_resource_grants: {
        ghost: { [ORDERS]: ['orders:read'] },
        'identity-cli': { [ORDERS]: ['orders:read'] },
        web: { 'https://unknown.example.com': ['x'], [ORDERS]: ['orders:delete'], 'builtin:nothing': [] },
      },
    };
    const res = await admin.call('POST', '/configuration/validate', doc);
    assert.equal(res.status, 200);
    const plan = await json(res);
    assert.equal(plan.valid, false);
    assert.deepEqual(errorsOf(plan).sort(), [
      '/client_resource_grants/ghost/https:~1~1orders.example.com~1api:unknown_client',
      '/client_resource_grants/identity-cli/https:~1~1orders.example.com~1api:builtin_client',
      '/client_resource_grants/web/builtin:nothing:unknown_resource',
      '/client_resource_grants/web/https:~1~1orders.example.com~1api/scopes/0:undeclared_scope',
      '/client_resource_grants/web/https:~1~1unknown.example.com:unknown_resource',
      '/clients/1/redirect_uris/0:http_not_allowed',
      '/clients/2/service_principal_id:environment_bound',
      '/expected_policy_revision:stale_revision',
      '/format:unsupported_format',
      '/permissions/0/name:reserved_name',
      '/policy/login:no_sign_in_method',
      '/policy/webauthn/origins:required',
      '/resources/1/audience:duplicate',
      '/resources/2/audience:invalid_audience',
      '/roles/0/permissions/0:unknown_permission',
      '/roles/1/organization_id:environment_bound',
      '/roles/2/composite_role_ids:environment_bound',
      '/surprise:unknown_member',
    ]);
  });

  test('case=__proto__ and constructor members are unknown members at every depth', async (t) => {
    const { h, realm, admin } = await setup(t);
    // An object literal cannot hold a `__proto__` member, so it is written as PROTO and renamed in
    // the text, which is what a client sends.
    const doc = sampleDocument({
      PROTO: { format: 'other' },
      clients: [
        {
          client_id: 'proto-web',
          name: 'Proto',
          type: 'web',
          redirect_uris: ['https://proto.example.com/cb'],
          token_policy: { require_mfa: true, PROTO: { require_mfa: false } },
        },
        { client_id: 'proto-svc', name: 'Proto service', type: 'service', PROTO: null },
      ],
      roles: [
        { name: 'polluter', permissions: ['orders.refund'], PROTO: { name: 'admin' } },
        { name: 'builder', constructor: { prototype: { polluted: true } } },
      ],
      client_resource_grants: null,
    });
    const text = JSON.stringify(doc).replaceAll('"PROTO"', '"__proto__"');
    const expected = [
      '/__proto__:unknown_member',
      '/clients/0/token_policy/__proto__:unknown_member',
      '/clients/1/__proto__:unknown_member',
      '/roles/0/__proto__:unknown_member',
      '/roles/1/constructor:unknown_member',
    ];
    const res = await admin.call('POST', '/configuration/validate', text);
    assert.equal(res.status, 200);
    const plan = await json(res);
    assert.equal(plan.valid, false);
    assert.deepEqual(errorsOf(plan).sort(), expected);
    const imported = await admin.call('POST', '/configuration/imports', text);
    assert.equal(imported.status, 422);
    assert.deepEqual(errorsOf(await json(imported)).sort(), expected);
    const created = await h.ctx.db.query(
      `select 1 from roles where realm_id = $1 and name in ('polluter', 'builder')
       union all select 1 from clients where realm_id = $1 and client_id like 'proto-%'`,
      [realm.id],
    );
    assert.equal(created.rows.length, 0);
    assert.equal(({} as Json).polluted, undefined);
  });

  test('case=a policy change needs expected_policy_revision', async (t) => {
    const { admin } = await setup(t);
    const { expected_policy_revision: _, ...doc } = sampleDocument();
    const plan = await json(await admin.call('POST', '/configuration/validate', doc));
    assert.deepEqual(errorsOf(plan), ['/expected_policy_revision:required']);
    const ok = await json(
      await admin.call('POST', '/configuration/validate', { ...doc, expected_policy_revision: 1 }),
    );
    assert.deepEqual(ok.errors, []);
  });
});

describe('configuration › import', () => {
  test('case=creates everything in one go, then reports it unchanged', async (t) => {
    const { h, realm, admin } = await setup(t);
    const res = await admin.call('POST', '/configuration/imports', sampleDocument());
    assert.equal(res.status, 200, JSON.stringify(await res.clone().json()));
    const body = await json(res);
    assert.equal(body.applied, true);
    assert.equal(await revision(h, realm), 2);
    const audit = await h.ctx.db.query<{ reason: string; signal: string }>(
      `select reason, signal from audit_events where realm_id = $1 and type = 'realm.policy.updated'`,
      [realm.id],
    );
    assert.deepEqual(audit.rows, [{ reason: 'configuration import', signal: 'configuration_change' }]);
    const grants = await admin.call('GET', '/clients/shop-web/resource-grants');
    assert.equal(grants.status, 200);
    const billing = await json(
      await admin.call('GET', `/clients/billing/resource-grants/${encodeURIComponent(ORDERS)}`),
    );
    assert.deepEqual(billing.subject_types, ['service_principal']);
    const shop = await json(
      await admin.call('GET', `/clients/shop-web/resource-grants/${encodeURIComponent(ORDERS)}`),
    );
    assert.deepEqual(shop.subject_types, ['user']);
    // No secret was issued for the confidential client; an administrator issues one.
    assert.deepEqual((await json(await admin.call('GET', '/clients/shop-web/secrets'))).items, []);

    const again = await json(
      await admin.call('POST', '/configuration/imports', {
        ...sampleDocument(),
        expected_policy_revision: 2,
      }),
    );
    assert.equal(again.applied, true);
    assert.equal((again.policy as Json).action, 'unchanged');
    for (const kind of ['resources', 'clients', 'permissions', 'roles'])
      assert.deepEqual((again[kind] as Json).differs, [], `${kind} read back as the document wrote them`);
    assert.deepEqual((again.resources as Json).unchanged, [ORDERS]);
    assert.deepEqual((again.clients as Json).unchanged, ['shop-web', 'billing']);
    assert.deepEqual((again.roles as Json).unchanged, ['refunder']);
    assert.equal(((again.client_resource_grants as Json).unchanged as unknown[]).length, 3);
    assert.equal(await revision(h, realm), 2);
  });

  test('case=create-only leaves differing objects alone; reconcile updates them', async (t) => {
    const { h, realm, admin } = await setup(t);
    assert.equal((await admin.call('POST', '/configuration/imports', sampleDocument())).status, 200);
    const changed = sampleDocument({
      policy: undefined,
      resources: [
        {
          name: 'Orders v2',
          audience: ORDERS,
          scopes: [{ name: 'orders:read' }, { name: 'orders:write' }, { name: 'orders:ship' }],
        },
      ],
      clients: [
        {
          client_id: 'shop-web',
          name: 'Shop 2',
          type: 'web',
          redirect_uris: ['https://shop.example.com/cb2'],
          require_pushed_authorization_requests: true,
        },
      ],
      roles: [{ name: 'refunder', permissions: ['orders.refund', 'realm.users.read'] }],
      client_resource_grants: { 'shop-web': { [ORDERS]: ['orders:read', 'orders:ship'] } },
    });
    const create = await json(await admin.call('POST', '/configuration/imports', changed));
    assert.deepEqual((create.resources as Json).differs, [ORDERS]);
    assert.deepEqual((create.clients as Json).differs, ['shop-web']);
    assert.deepEqual((create.roles as Json).differs, ['refunder']);
    // Grants are replaced whatever the mode (Import semantics 5): the resource kept its scopes, so
    // orders:ship is not declared yet.
    assert.equal(create.applied, undefined);
    assert.equal(create.code, 'validation_failed');
    const noGrant = { ...changed, client_resource_grants: undefined };
    const created = await json(await admin.call('POST', '/configuration/imports', noGrant));
    assert.equal(created.applied, true);
    assert.equal((await json(await admin.call('GET', '/clients/shop-web'))).name, 'Shop');

    const rec = await admin.call('POST', '/configuration/imports?mode=reconcile', changed);
    assert.equal(rec.status, 200, JSON.stringify(await rec.clone().json()));
    const plan = await json(rec);
    assert.deepEqual((plan.resources as Json).update, [ORDERS]);
    assert.deepEqual((plan.clients as Json).update, ['shop-web']);
    assert.deepEqual((plan.roles as Json).update, ['refunder']);
    assert.equal(((plan.client_resource_grants as Json).update as unknown[]).length, 1);
    const client = await json(await admin.call('GET', '/clients/shop-web'));
    assert.equal(client.name, 'Shop 2');
    assert.deepEqual(client.redirect_uris, ['https://shop.example.com/cb2']);
    assert.equal(client.require_pushed_authorization_requests, true);
    const resource = await json(await admin.call('GET', `/resources/${encodeURIComponent(ORDERS)}`));
    assert.equal(resource.name, 'Orders v2');
    // Members the document omits keep their values.
    assert.equal(resource.access_token_ttl_seconds, 300);
    const roles = await h.ctx.db.query<{ permissions: string[] }>(
      `select permissions from roles where realm_id = $1 and name = 'refunder'`,
      [realm.id],
    );
    assert.deepEqual(roles.rows[0]?.permissions.sort(), ['orders.refund', 'realm.users.read']);
  });

  test('case=a plan with errors is 422 with the plan; dry_run only plans', async (t) => {
    const { h, realm, admin } = await setup(t);
    const bad = await admin.call('POST', '/configuration/imports', sampleDocument({ format: 'other' }));
    assert.equal(bad.status, 422);
    const body = await json(bad);
    assert.equal(body.code, 'validation_failed');
    assert.deepEqual(errorsOf(body), ['/format:unsupported_format']);
    assert.deepEqual((body.resources as Json).create, [ORDERS]);
    const dry = await admin.call('POST', '/configuration/imports?dry_run=true', sampleDocument());
    assert.equal(dry.status, 200);
    const plan = await json(dry);
    assert.equal(plan.applied, false);
    assert.equal(plan.dry_run, true);
    assert.equal(await count(h, realm, 'resources'), 0);
    assert.equal(await revision(h, realm), 1);
    assert.equal(
      (await admin.call('POST', '/configuration/imports?mode=other', sampleDocument())).status,
      400,
    );
    assert.equal((await admin.call('POST', '/configuration/validate', [])).status, 400);
  });

  test('case=a failure mid-apply rolls back every change', async (t) => {
    const { h, realm } = await setup(t);
    const user = await h.createUser(realm, {
      email: 'importer@example.com',
      password: 'correct horse battery staple',
    });
    await assignRoles(h, realm, user.id, ['realm-admin']);
    const now = h.clock.now();
    const request = {
      realm,
      call: { realmId: realm.id, actor: { type: 'user' as const, id: user.id }, correlationId: 'test', now },
      caller: {
        kind: 'user' as const,
        id: user.id,
        permissions: new Set<string>(REALM_PERMISSIONS),
        sessionMfa: true,
        authTime: Math.floor(now.getTime() / 1000),
      },
      body: sampleDocument(),
      mode: 'create' as const,
    };
    let seen = 0;
    await assert.rejects(
      importConfiguration(
        h.ctx,
        request,
        { dryRun: false },
        {
          beforeChange: async (kind) => {
            seen += 1;
            if (kind === 'role') throw new Error('injected failure');
          },
        },
      ),
      /injected failure/,
    );
    assert.ok(seen > 4, 'the failure came after policy, permission, resource and client changes');
    assert.equal(await revision(h, realm), 1);
    assert.equal(await count(h, realm, 'resources'), 0);
    assert.equal(await count(h, realm, 'permissions'), 0);
    const clients = await h.ctx.db.query(`select 1 from clients where realm_id = $1 and not builtin`, [
      realm.id,
    ]);
    assert.equal(clients.rowCount, 0);
    const audits = await h.ctx.db.query(
      `select 1 from audit_events where realm_id = $1 and type in ('realm.policy.updated', 'resource.created', 'client.created')`,
      [realm.id],
    );
    assert.equal(audits.rowCount, 0);
    // The same import goes through once nothing fails.
    const done = await importConfiguration(h.ctx, request, { dryRun: false });
    assert.equal(done.applied, true);
    assert.equal(await count(h, realm, 'resources'), 1);
  });

  test('case=a policy change between plan and apply fails the import with 412', async (t) => {
    const { h, realm } = await setup(t);
    const user = await h.createUser(realm, {
      email: 'importer@example.com',
      password: 'correct horse battery staple',
    });
    await assignRoles(h, realm, user.id, ['realm-admin']);
    const now = h.clock.now();
    const request = {
      realm,
      call: { realmId: realm.id, actor: { type: 'user' as const, id: user.id }, correlationId: 'test', now },
      caller: {
        kind: 'user' as const,
        id: user.id,
        permissions: new Set<string>(REALM_PERMISSIONS),
        sessionMfa: true,
        authTime: Math.floor(now.getTime() / 1000),
      },
      body: sampleDocument(),
      mode: 'create' as const,
    };
    await assert.rejects(
      importConfiguration(
        h.ctx,
        request,
        { dryRun: false },
        {
          afterPlan: () => h.setPolicy(realm, { audit: { retention_days: 60 } }),
        },
      ),
      (e: { status?: number; code?: string }) => e.status === 412 && e.code === 'precondition_failed',
    );
    assert.equal(await revision(h, realm), 2);
    assert.equal(await count(h, realm, 'resources'), 0);
  });
});

describe('configuration › permissions', () => {
  test('case=validate and import need realm.configuration.import; each change needs its own permission', async (t) => {
    const { h, realm, admin } = await setup(t);
    const nobody = await callerWith(h, realm, admin, 'no-config', ['realm.settings.read']);
    assert.equal((await nobody.call('POST', '/configuration/validate', sampleDocument())).status, 403);
    assert.equal((await nobody.call('POST', '/configuration/imports', sampleDocument())).status, 403);
    const importer = await callerWith(h, realm, admin, 'importer', [
      'realm.configuration.import',
      'realm.resources.write',
      'realm.roles.write',
    ]);
    const plan = await json(await importer.call('POST', '/configuration/validate', sampleDocument()));
    assert.deepEqual(plan.missing_permissions, ['realm.clients.write', 'realm.settings.write']);
    const dry = await importer.call('POST', '/configuration/imports?dry_run=true', sampleDocument());
    assert.equal(dry.status, 200);
    const refused = await importer.call('POST', '/configuration/imports', sampleDocument());
    assert.equal(refused.status, 403);
    assert.deepEqual((await json(refused)).missing_permissions, [
      'realm.clients.write',
      'realm.settings.write',
    ]);
    assert.equal(await count(h, realm, 'resources'), 0);
    // Without the policy and clients the same caller may import the rest (roles only within
    // what it holds itself: the delegation ceiling applies as in the roles API).
    const withRole = sampleDocument({ policy: undefined, clients: [], client_resource_grants: {} });
    const ceiling = await importer.call('POST', '/configuration/imports', withRole);
    assert.equal(ceiling.status, 403);
    assert.equal(await count(h, realm, 'resources'), 0);
    const rest = { ...withRole, roles: [] };
    const ok = await importer.call('POST', '/configuration/imports', rest);
    assert.equal(ok.status, 200, JSON.stringify(await ok.clone().json()));
    assert.equal(await count(h, realm, 'resources'), 1);
  });

  test('case=import needs a recent sign-in', async (t) => {
    const { h, admin } = await setup(t);
    h.clock.advance(11 * 60_000);
    const res = await admin.call('POST', '/configuration/imports?dry_run=true', sampleDocument());
    assert.equal(res.status, 403);
    assert.equal((await json(res)).code, 'step_up_required');
    assert.equal((await admin.call('POST', '/configuration/validate', sampleDocument())).status, 200);
  });
});
