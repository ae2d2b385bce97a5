// GET /migration-adapters and POST /migration-plans (spec doc 2, "Migration adapters": APIs used;
// docs/migration.md): the server converts 1..20 export documents into a plan without writing
// anything; an unsupported major is 422 on source_version.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { body, createOrg } from '../organizations/org-test-kit.ts';
import { footprint, importSetup } from './import-kit.ts';
import { fixture, readJson } from './migrate-kit.ts';

const KC = () => readJson(fixture('keycloak-26-realm.json'));

describe('migration plans', () => {
  test('case=the adapters are listed and a Keycloak export is planned without writing anything', async (t) => {
    const s = await importSetup(t);
    const adapters = await s.admin.call('GET', '/migration-adapters');
    assert.equal(adapters.status, 200);
    assert.deepEqual(
      (await body(adapters)).items.map((a: { name: string; accepted_major: string }) => [
        a.name,
        a.accepted_major,
      ]),
      [
        ['keycloak', '26'],
        ['zitadel', 'v4'],
        ['supertokens', '12'],
      ],
    );
    const before = await footprint(s);
    const res = await s.admin.call('POST', '/migration-plans', {
      adapter: 'keycloak',
      source_system: 'kc-acme',
      documents: [KC()],
      import_totp: true,
    });
    assert.equal(res.status, 200, await res.clone().text());
    const plan = await body(res);
    assert.equal(plan.format, 'service.migration-report.v1');
    assert.equal(plan.source_version, '26.0.7');
    assert.deepEqual(plan.import.expected, {
      expected_users: 4,
      expected_memberships: 2,
      expected_password_verifiers: 4,
      expected_totp_factors: 1,
    });
    assert.deepEqual(
      plan.organizations.map((o: { action: string; slug: string }) => [o.action, o.slug]),
      [['create', 'acme-research']],
    );
    assert.deepEqual(plan.missing_roles, []);
    assert.equal(plan.blocked, false);
    assert.deepEqual(await footprint(s), before, 'a plan writes nothing');

    // An organization that only shares the slug is a conflict; a mapped role the realm lacks is missing.
    await createOrg(s, { slug: 'acme-research' });
    const blocked = await body(
      await s.admin.call('POST', '/migration-plans', {
        adapter: 'keycloak',
        source_system: 'kc-acme',
        documents: [KC()],
        mapping: { format: 'service.migration-mapping.v1', roles: { 'realm-role:editor': ['editors'] } },
      }),
    );
    assert.equal(blocked.organizations[0].action, 'conflict');
    assert.deepEqual(blocked.missing_roles, ['editors']);
    assert.equal(blocked.blocked, true);
  });

  test('case=versions: an unsupported major and a missing version are 422 on source_version', async (t) => {
    const s = await importSetup(t);
    const plan = (b: Record<string, unknown>) => s.admin.call('POST', '/migration-plans', b);
    const old = await plan({
      adapter: 'keycloak',
      source_system: 'kc-acme',
      documents: [{ ...KC(), keycloakVersion: '25.0.6' }],
    });
    assert.equal(old.status, 422);
    assert.deepEqual(
      (await body(old)).errors.map((e: { field: string; code: string }) => [e.field, e.code]),
      [['source_version', 'unsupported_version']],
    );
    const zitadel = readJson(fixture('zitadel-v4-export.json'));
    const none = await plan({ adapter: 'zitadel', source_system: 'z', documents: [zitadel] });
    assert.equal(none.status, 422);
    assert.equal((await body(none)).errors[0].field, 'source_version');
    const v3 = await plan({
      adapter: 'zitadel',
      source_system: 'z',
      source_version: 'v3.4',
      documents: [zitadel],
    });
    assert.equal(v3.status, 422);
    const v4 = await plan({
      adapter: 'zitadel',
      source_system: 'z',
      source_version: 'v4.1',
      documents: [zitadel],
    });
    assert.equal(v4.status, 200, await v4.clone().text());
    const st = await plan({
      adapter: 'supertokens',
      source_system: 'st',
      documents: [readJson(fixture('supertokens-12-export.json'))],
    });
    assert.equal(st.status, 200, await st.clone().text());
    assert.equal((await body(st)).source_version, '12.0.4');
  });

  test('case=1..20 documents, a known adapter, and realm.users.import', async (t) => {
    const s = await importSetup(t);
    const plan = (b: Record<string, unknown>) => s.admin.call('POST', '/migration-plans', b);
    const base = { adapter: 'keycloak', source_system: 'kc-acme' };
    assert.equal((await plan({ ...base, documents: [] })).status, 422);
    assert.equal((await plan({ ...base, documents: Array.from({ length: 21 }, () => ({})) })).status, 422);
    assert.equal((await plan({ ...base, adapter: 'logto', documents: [KC()] })).status, 422);
    const notExport = await plan({ ...base, documents: [{ hello: 'world' }] });
    assert.equal(notExport.status, 422);
    assert.equal((await body(notExport)).errors[0].field, 'documents[0]');
    const nobody = await apiCaller(s.h, s.realm, { roles: [] });
    assert.equal((await nobody.call('POST', '/migration-plans', { ...base, documents: [KC()] })).status, 403);
    assert.equal((await nobody.call('GET', '/migration-adapters')).status, 403);
  });
});
