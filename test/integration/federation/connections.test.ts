// The identity-provider administration API (docs/federation.md, Connections): realm-wide and
// organization connections, the secret that never comes back, the issuer that cannot move while
// identities are linked, and the emergency control that turns a connection off.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../../src/platform/ids.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import {
  type Body,
  body,
  createOrg,
  type OrgSetup,
  orgCaller,
  setup,
} from '../organizations/org-test-kit.ts';

const SECRET = 'upstream-client-secret-9f8e7d';

const google = (extra: Record<string, unknown> = {}) => ({
  alias: 'google',
  display_name: 'Google',
  adapter: 'google',
  config: { client_id: 'abc.apps.googleusercontent.com' },
  client_secret: SECRET,
  ...extra,
});

async function create(
  s: OrgSetup,
  input: Record<string, unknown>,
  path = '/identity-providers',
): Promise<Body> {
  const res = await s.admin.call('POST', path, input);
  assert.equal(res.status, 201, await res.clone().text());
  return body(res);
}

/** A link as a sign-in would leave it: straight into the table (the sign-in tests make real ones). */
async function seedLink(s: OrgSetup, providerId: string, issuer: string): Promise<string> {
  const user = await s.h.createUser(s.realm, {
    email: `l-${Math.random().toString(36).slice(2)}@example.com`,
  });
  const id = newId('lid');
  await s.h.ctx.db.query(
    `insert into linked_identities (realm_id, id, user_id, provider_id, upstream_issuer, upstream_subject, provenance,
       created_at, updated_at) values ($1, $2, $3, $4, $5, 'sub-1', 'jit', now(), now())`,
    [s.realm.id, id, user.id, providerId, issuer],
  );
  return id;
}

describe('federation › connections API', () => {
  test('case=create, read, list, change and delete a realm-wide connection; the secret never comes back', async (t) => {
    const s = await setup(t);
    const created = await create(s, google());
    assert.match(created.id, /^idp_[0-9a-z]{26}$/);
    assert.equal(created.kind, 'oidc', 'the google adapter is OpenID Connect');
    assert.equal(created.issuer, 'https://accounts.google.com', 'the preset names the issuer');
    assert.equal(created.state, 'active');
    assert.equal(created.linking_policy, 'prove_existing');
    assert.equal(created.jit_provisioning, true);
    assert.equal(created.trust_upstream_mfa, false);
    assert.equal(created.client_secret_set, true);
    assert.equal(created.owner_user_id, s.admin.userId);
    assert.ok(!JSON.stringify(created).includes(SECRET), 'the secret is not in the answer');

    const stored = await s.h.ctx.db.query<{ client_secret_sealed: string }>(
      'select client_secret_sealed from identity_providers where realm_id = $1 and id = $2',
      [s.realm.id, created.id],
    );
    assert.match(stored.rows[0]?.client_secret_sealed ?? '', /^pa1\.1\./, 'sealed under the root key');
    assert.ok(!stored.rows[0]?.client_secret_sealed.includes(SECRET));

    const read = await s.admin.call('GET', `/identity-providers/${created.id}`);
    assert.equal(read.status, 200);
    const etag = read.headers.get('etag') ?? '';
    assert.ok(!(await read.text()).includes(SECRET));
    const list = await body(await s.admin.call('GET', '/identity-providers'));
    assert.deepEqual(
      list.items.map((c: Body) => c.alias),
      ['google'],
    );

    const stale = await s.admin.call(
      'PATCH',
      `/identity-providers/${created.id}`,
      { display_name: 'Google Workspace' },
      { 'if-match': '"99"' },
    );
    assert.equal(stale.status, 412);
    const patched = await s.admin.call(
      'PATCH',
      `/identity-providers/${created.id}`,
      { display_name: 'Google Workspace', trust_upstream_mfa: true, client_secret_ref: 'env:GOOGLE_SECRET' },
      { 'if-match': etag },
    );
    assert.equal(patched.status, 200, await patched.clone().text());
    const after = await body(patched);
    assert.equal(after.display_name, 'Google Workspace');
    assert.equal(after.trust_upstream_mfa, true);
    assert.equal(after.client_secret_set, true);
    assert.ok(!JSON.stringify(after).includes('GOOGLE_SECRET'), 'the reference is not shown either');

    const taken = await s.admin.call('POST', '/identity-providers', google());
    assert.equal(taken.status, 409, 'aliases are unique in the realm');

    assert.equal((await s.admin.call('DELETE', `/identity-providers/${created.id}`)).status, 204);
    assert.equal((await s.admin.call('GET', `/identity-providers/${created.id}`)).status, 404);
    const audits = await s.h.ctx.db.query<{ type: string }>(
      `select type from audit_events where realm_id = $1 and target_id = $2 order by id`,
      [s.realm.id, created.id],
    );
    assert.deepEqual(audits.rows.map((r) => r.type).sort(), [
      'identity_provider.created',
      'identity_provider.deleted',
      'identity_provider.updated',
    ]);
  });

  test('case=what a definition must hold is checked, all of it at once', async (t) => {
    const s = await setup(t);
    const refused = async (input: Record<string, unknown>, status: number, fields: string[]) => {
      const res = await s.admin.call('POST', '/identity-providers', input);
      const b = await body(res);
      assert.equal(res.status, status, JSON.stringify(b));
      for (const f of fields)
        assert.ok(
          (b.errors as { field: string }[]).some((e) => e.field === f),
          `${f} named in ${JSON.stringify(b)}`,
        );
    };
    await refused({ ...google(), surprise: 1 }, 400, ['surprise']);
    await refused({ ...google(), alias: 'Not An Alias' }, 422, ['alias']);
    await refused(
      {
        alias: 'gh',
        display_name: 'Plain',
        kind: 'oauth2',
        issuer: 'https://git.example.com',
        config: { client_id: 'x' },
        client_secret: 'y',
      },
      422,
      ['config.authorization_endpoint', 'config.token_endpoint', 'config.userinfo_endpoint'],
    );
    await refused({ alias: 'x', display_name: 'X', config: { client_id: 'x' }, client_secret: 'y' }, 422, [
      'issuer',
    ]);
    await refused(
      { ...google(), issuer: 'https://user:pw@accounts.example.com', client_secret: undefined },
      422,
      ['issuer', 'client_secret'],
    );
    await refused({ ...google(), kind: 'oauth2' }, 422, ['kind']);
    await refused({ ...google(), client_secret_ref: 'env:X' }, 422, ['client_secret_ref']);
    await refused(
      { ...google(), adapter: 'microsoft', alias: 'entra', config: { client_id: 'x', discovery_url: '' } },
      422,
      ['config.discovery_url'],
    );
    const admin = await s.h.ctx.db.query<{ id: string }>(
      `select id from roles where realm_id = $1 and name = 'realm-admin'`,
      [s.realm.id],
    );
    await refused({ ...google(), jit_default_role_id: admin.rows[0]?.id }, 422, ['jit_default_role_id']);
    const none = await s.h.ctx.db.query<{ n: string }>(
      'select count(*) as n from identity_providers where realm_id = $1',
      [s.realm.id],
    );
    assert.equal(none.rows[0]?.n, '0', 'nothing was created');
  });

  test('case=the issuer cannot change while identities are linked, nor can the connection go', async (t) => {
    const s = await setup(t);
    const c = await create(s, {
      alias: 'corp',
      display_name: 'Corp IdP',
      issuer: 'https://idp.corp.example.com',
      config: { client_id: 'proudauth' },
      client_secret: SECRET,
    });
    const moved = { issuer: 'https://idp2.corp.example.com' };
    const before = await s.admin.call('PATCH', `/identity-providers/${c.id}`, moved);
    assert.equal(before.status, 200, 'no links yet: the issuer may change');
    await seedLink(s, c.id, moved.issuer);
    const refused = await s.admin.call('PATCH', `/identity-providers/${c.id}`, {
      issuer: 'https://idp3.corp.example.com',
    });
    assert.equal(refused.status, 409);
    assert.equal((await s.admin.call('DELETE', `/identity-providers/${c.id}`)).status, 409);
    const row = await body(await s.admin.call('GET', `/identity-providers/${c.id}`));
    assert.equal(row.issuer, moved.issuer, 'unchanged');
    const same = await s.admin.call('PATCH', `/identity-providers/${c.id}`, {
      display_name: 'Corp',
      issuer: moved.issuer,
    });
    assert.equal(same.status, 200, 'naming the same issuer is no change');
  });

  test('case=organization administrators manage their organization connections only', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const other = await createOrg(s);
    const orgAdmin = await orgCaller(s, org.id, 'admin');
    const base = `/organizations/${org.id}/identity-providers`;
    const res = await orgAdmin.call('POST', base, {
      alias: 'acme-entra',
      display_name: 'Acme Entra ID',
      adapter: 'microsoft',
      issuer: 'https://login.microsoftonline.com/11111111-2222-3333-4444-555555555555/v2.0',
      config: { client_id: 'acme' },
      client_secret: SECRET,
    });
    assert.equal(res.status, 201, await res.clone().text());
    const c = await body(res);
    assert.equal(c.organization_id, org.id);
    assert.equal((await orgAdmin.call('GET', `${base}/${c.id}`)).status, 200);
    assert.equal((await orgAdmin.call('GET', '/identity-providers')).status, 403, 'not the realm list');
    assert.equal(
      (await orgAdmin.call('GET', `/organizations/${other.id}/identity-providers`)).status,
      404,
      'another organization is not theirs',
    );
    const realmWide = await create(s, google());
    assert.equal(
      (await orgAdmin.call('GET', `${base}/${realmWide.id}`)).status,
      404,
      'a realm-wide connection is not in the organization',
    );
    const otherAdmin = await orgCaller(s, other.id, 'admin');
    assert.equal(
      (
        await otherAdmin.call('PATCH', `/organizations/${other.id}/identity-providers/${c.id}`, {
          state: 'disabled',
        })
      ).status,
      404,
    );
    const everything = await body(await s.admin.call('GET', '/identity-providers'));
    assert.deepEqual(
      everything.items.map((x: Body) => x.alias).sort(),
      ['acme-entra', 'google'],
      'the realm list shows both',
    );
    const member = await orgCaller(s, org.id, 'member');
    assert.equal((await member.call('GET', base)).status, 403, 'members do not administer connections');
  });

  test('case=the emergency control disables and enables a connection', async (t) => {
    const s = await setup(t);
    const c = await create(s, google());
    const control = (action: string) =>
      s.admin.call('POST', '/emergency/controls', {
        target_type: 'identity_provider',
        target_id: c.id,
        action,
        reason: 'upstream compromised',
      });
    const off = await control('disable');
    assert.equal(off.status, 200, await off.clone().text());
    assert.deepEqual(await body(off), {
      target_type: 'identity_provider',
      target_id: c.id,
      action: 'disable',
      state: 'disabled',
      changed: true,
    });
    assert.equal((await body(await s.admin.call('GET', `/identity-providers/${c.id}`))).state, 'disabled');
    assert.equal((await body(await control('disable'))).changed, false);
    assert.equal((await body(await control('enable'))).state, 'active');
    const unknown = await s.admin.call('POST', '/emergency/controls', {
      target_type: 'identity_provider',
      target_id: 'idp_x',
      action: 'disable',
      reason: 'no such one',
    });
    assert.equal(unknown.status, 404);
  });

  test('case=reading and writing connections needs the permissions', async (t) => {
    const s = await setup(t);
    const plain = await apiCaller(s.h, s.realm, { roles: [] });
    assert.equal((await plain.call('GET', '/identity-providers')).status, 403);
    assert.equal((await plain.call('POST', '/identity-providers', google())).status, 403);
  });
});
