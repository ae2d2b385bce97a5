// A conformance pass modelled on the checks of Microsoft's Entra ID SCIM validator (discovery,
// authentication, required attributes, uniqueness, filters, PATCH of each kind, deletion), and
// every SCIM limit of spec doc 2 (Limits: SCIM): 1200 requests a minute per connector, 1 MiB
// bodies, pages of 200, 20,000 resources examined without an index, filters of 1024 bytes and 64
// nodes, 1..100 PATCH operations.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { spendBudgets } from '../../../src/platform/abuse-budget.ts';
import { rows } from '../../harness/signin-kit.ts';
import { assertScimError, ENTERPRISE, entraUser, GROUP, PATCH_OP, scimSetup, USER } from './scim-kit.ts';

const q = (f: string) => `/Users?filter=${encodeURIComponent(f)}`;
const ops = (n: number) => ({
  schemas: [PATCH_OP],
  Operations: Array.from({ length: n }, (_, i) => ({ op: 'replace', path: 'title', value: `t${i}` })),
});

describe('SCIM conformance', () => {
  test('case=discovery: ServiceProviderConfig, ResourceTypes and Schemas', async (t) => {
    const { scim } = await scimSetup(t);
    const spc = await scim('GET', '/ServiceProviderConfig');
    assert.equal(spc.status, 200);
    assert.deepEqual(
      [
        spc.body.patch.supported,
        spc.body.filter.supported,
        spc.body.filter.maxResults,
        spc.body.etag.supported,
      ],
      [true, true, 200, true],
    );
    assert.equal(spc.body.authenticationSchemes[0].type, 'oauthbearertoken');
    const types = await scim('GET', '/ResourceTypes');
    assert.deepEqual(
      types.body.Resources.map((r: { endpoint: string }) => r.endpoint),
      ['/Users', '/Groups'],
    );
    assert.equal((await scim('GET', '/ResourceTypes/User')).body.schemaExtensions[0].schema, ENTERPRISE);
    const schemas = await scim('GET', '/Schemas');
    assert.deepEqual(
      schemas.body.Resources.map((s: { id: string }) => s.id),
      [USER, ENTERPRISE, GROUP],
    );
    assert.equal((await scim('GET', `/Schemas/${USER}`)).body.attributes[0].name, 'userName');
    assertScimError(await scim('GET', '/Schemas/urn:nothing'), 404);
    assertScimError(await scim('GET', '/Nothing'), 404);
  });

  test('case=authentication: missing, wrong and revoked credentials are 401', async (t) => {
    const { scim, api, token, connector, h } = await scimSetup(t);
    const none = await scim('GET', '/Users', undefined, {}, '');
    assertScimError(none, 401);
    assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
    assertScimError(await scim('GET', '/Users', undefined, {}, `${token.slice(0, -4)}AAAA`), 401);
    // An admin API key or access token is not a connector credential.
    assertScimError(await scim('GET', '/Users', undefined, {}, 'pa_ak_00000000000000000000000000_x'), 401);
    const listed = await api('GET', '/scim-connectors');
    assert.deepEqual(
      listed.body.items.map((c: { id: string; token?: string }) => [c.id, c.token]),
      [[connector.id, undefined]],
    );
    assert.equal((await api('DELETE', `/scim-connectors/${connector.id}`)).status, 204);
    assertScimError(await scim('GET', '/Users'), 401);
    const after = await api('GET', '/scim-connectors');
    assert.equal(after.body.items[0].state, 'revoked');
    // The revocation log keeps it revoked over a restored backup (docs/restore.md).
    const logged = await rows(
      h,
      "select record from revocation_log where kind = 'automation_credential_revoked'",
    );
    assert.deepEqual(
      logged.map((l) => [l.record.credential, l.record.credential_id]),
      [['scim_connector', connector.id]],
    );
  });

  test('case=users: required attributes, uniqueness, filters, PATCH add/replace/remove, delete', async (t) => {
    const { scim, h, connector } = await scimSetup(t);
    assertScimError(await scim('POST', '/Users', { schemas: [USER], active: true }), 400, 'invalidValue');
    assertScimError(await scim('POST', '/Users', { userName: 'x@example.com' }), 400, 'invalidSyntax');
    assertScimError(await scim('POST', '/Users', '{"schemas": [', {}), 400, 'invalidSyntax');
    const u = await scim('POST', '/Users', entraUser(5));
    assert.equal(u.status, 201);
    assertScimError(await scim('POST', '/Users', entraUser(5)), 409, 'uniqueness');
    assertScimError(await scim('GET', '/Users/usr_01JNOTTHERE000000000000000'), 404);

    assert.equal((await scim('GET', q('userName eq "nobody@example.com"'))).body.totalResults, 0);
    assert.equal((await scim('GET', q(`externalId eq "${entraUser(5).externalId}"`))).body.totalResults, 1);
    assert.equal((await scim('GET', q(`id eq "${u.body.id}"`))).body.totalResults, 1);
    assert.equal((await scim('GET', q(`${ENTERPRISE}:employeeNumber eq "E5"`))).body.totalResults, 1);
    assertScimError(await scim('GET', q('userName eq')), 400, 'invalidFilter');
    assertScimError(await scim('GET', q('userName regex ".*"')), 400, 'invalidFilter');

    const patch = (Operations: unknown[]) =>
      scim('PATCH', `/Users/${u.body.id}`, { schemas: [PATCH_OP], Operations });
    const added = await patch([
      { op: 'add', path: 'title', value: 'Engineer' },
      { op: 'add', path: 'phoneNumbers', value: [{ type: 'work', value: '+15551234567' }] },
    ]);
    assert.deepEqual([added.body.title, added.body.phoneNumbers.length], ['Engineer', 1]);
    const replaced = await patch([
      { op: 'replace', path: 'emails[type eq "work"].value', value: 'new@testuser.com' },
      { op: 'replace', path: 'userName', value: 'renamed@testuser.com' },
      { op: 'replace', path: 'externalId', value: 'ext-2' },
    ]);
    assert.deepEqual(
      [replaced.body.emails[0].value, replaced.body.userName, replaced.body.externalId],
      ['new@testuser.com', 'renamed@testuser.com', 'ext-2'],
    );
    const removed = await patch([
      { op: 'remove', path: 'title' },
      { op: 'remove', path: `${ENTERPRISE}:department` },
    ]);
    assert.equal(removed.body.title, undefined);
    assert.equal(removed.body[ENTERPRISE].department, undefined);
    assertScimError(await patch([{ op: 'replace', path: 'id', value: 'usr_x' }]), 400, 'mutability');
    assertScimError(await patch([{ op: 'replace', path: 'emails[type eq', value: 'x' }]), 400, 'invalidPath');
    assertScimError(await patch([{ op: 'move', path: 'title', value: 'x' }]), 400, 'invalidValue');
    assertScimError(await patch([{ op: 'remove', path: 'userName' }]), 400, 'invalidValue');

    assert.equal((await scim('DELETE', `/Users/${u.body.id}`)).status, 204);
    assertScimError(await scim('DELETE', `/Users/${u.body.id}`), 404);
    const [m] = await rows(
      h,
      "select count(*)::int as n from audit_events where actor_type = 'scim_connector' and actor_id = $1",
      [connector.id],
    );
    assert.ok(Number(m?.n) >= 5);
  });

  test('case=limits: body, filter bytes and nodes, PATCH operations, rate, page size', async (t) => {
    const { scim, h, realm, connector } = await scimSetup(t);
    const u = await scim('POST', '/Users', entraUser(6));
    const big = { ...entraUser(7), title: 'x'.repeat(1_048_576) };
    assertScimError(await scim('POST', '/Users', big), 413);
    // Just under 1 MiB is read (and refused for its value, not its size).
    const under = { ...entraUser(8), nickName: 'x'.repeat(1_000_000) };
    assert.equal((await scim('POST', '/Users', under)).status, 201);

    assertScimError(await scim('GET', q(`userName eq "${'a'.repeat(1100)}"`)), 400, 'invalidFilter');
    const terms = (n: number) => Array.from({ length: n }, (_, i) => `title eq "${i}"`).join(' or ');
    assert.equal((await scim('GET', q(terms(32)))).status, 200);
    assertScimError(await scim('GET', q(terms(33))), 400, 'invalidFilter');

    assertScimError(await scim('PATCH', `/Users/${u.body.id}`, ops(0)), 400, 'invalidValue');
    assertScimError(await scim('PATCH', `/Users/${u.body.id}`, ops(101)), 400, 'invalidValue');
    const hundred = await scim('PATCH', `/Users/${u.body.id}`, ops(100));
    assert.deepEqual([hundred.status, hundred.body.title], [200, 't99']);

    await spendBudgets(
      h.ctx.db,
      [{ bucket: `scim:${realm.id}:${connector.id}`, limit: 1200, windowMs: 60_000 }],
      h.ctx.clock.now(),
      1200,
    );
    const limited = await scim('GET', '/Users');
    assertScimError(limited, 429);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
  });

  test('case=an unindexed filter over more than 20,000 users is tooMany; pages hold at most 200', async (t) => {
    const { scim, h, realm, connector } = await scimSetup(t);
    await h.ctx.db.query(
      `insert into users (realm_id, id, state, created_via, created_at, updated_at, profile_updated_at)
       select $1, 'usr_bulk' || lpad(g::text, 8, '0'), 'active', 'scim', now(), now(), now()
         from generate_series(1, 20001) g`,
      [realm.id],
    );
    await h.ctx.db.query(
      `insert into scim_users (realm_id, user_id, connector_id, user_name, user_name_key, created_at, updated_at)
       select $1, 'usr_bulk' || lpad(g::text, 8, '0'), $2, 'bulk' || g || '@example.com', 'bulk' || g || '@example.com', now(), now()
         from generate_series(1, 20001) g`,
      [realm.id, connector.id],
    );
    assertScimError(await scim('GET', q('title pr')), 400, 'tooMany');
    const indexed = await scim('GET', q('userName eq "BULK20001@example.com"'));
    assert.deepEqual([indexed.status, indexed.body.totalResults], [200, 1]);
    const page = await scim('GET', '/Users?count=500&startIndex=19001');
    assert.deepEqual(
      [page.status, page.body.totalResults, page.body.itemsPerPage],
      [200, 20001, 200],
      JSON.stringify(page.body),
    );
  });
});
