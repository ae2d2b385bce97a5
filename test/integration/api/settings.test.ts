// The realm settings API (spec doc 1, Endpoints: Configuration, PUT /settings; Policy): reading
// the policy, merging a patch, revisions, the expected revision, validation per rule, audit, and
// who may do it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
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
const fieldsOf = (body: Json) =>
  (body.errors as { field: string; code: string }[]).map((e) => `${e.field}:${e.code}`);

/** A caller holding a custom realm role with exactly these permissions. */
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

describe('settings › policy', () => {
  test('case=GET shows the policy of a new realm at revision 1', async (t) => {
    const { realm, admin } = await setup(t);
    const res = await admin.call('GET', '/settings');
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('etag'), '"1"');
    const body = await json(res);
    assert.equal(body.realm, realm.name);
    assert.equal(body.policy_revision, 1);
    assert.deepEqual((body.policy as Json).mfa, {
      allowed_factors: ['totp', 'webauthn', 'recovery_code'],
      requirement: 'optional',
    });
  });

  test('case=PUT merges member by member, lists whole, a new revision only when it differs, audited', async (t) => {
    const { h, realm, admin } = await setup(t);
    const put = await admin.call('PUT', '/settings', {
      policy: { mfa: { requirement: 'required' }, login: { identifiers: ['email'] } },
    });
    assert.equal(put.status, 200);
    const body = await json(put);
    assert.equal(body.policy_revision, 2);
    assert.equal(body.changed, true);
    const policy = body.policy as Json;
    assert.deepEqual(policy.mfa, {
      allowed_factors: ['totp', 'webauthn', 'recovery_code'],
      requirement: 'required',
    });
    assert.deepEqual(policy.login, { identifiers: ['email'], password: true });
    // The same patch again changes nothing.
    const again = await json(
      await admin.call('PUT', '/settings', { policy: { mfa: { requirement: 'required' } } }),
    );
    assert.equal(again.policy_revision, 2);
    assert.equal(again.changed, false);
    const audits = await h.ctx.db.query<{ signal: string; reason: string; data: Json; actor_id: string }>(
      `select signal, reason, data, actor_id from audit_events where realm_id = $1 and type = 'realm.policy.updated'`,
      [realm.id],
    );
    assert.equal(audits.rows.length, 1);
    assert.equal(audits.rows[0]?.signal, 'configuration_change');
    assert.equal(audits.rows[0]?.reason, 'settings API');
    assert.equal(audits.rows[0]?.actor_id, admin.userId);
    assert.deepEqual(audits.rows[0]?.data, {
      policy_revision: 2,
      previous_revision: 1,
      sections: ['login', 'mfa'],
    });
  });

  test('case=expected_policy_revision: a stale one is 412, 0 skips the check', async (t) => {
    const { admin } = await setup(t);
    const ok = await admin.call('PUT', '/settings', {
      policy: { data_access: { log_identity_reads: true } },
      expected_policy_revision: 1,
    });
    assert.equal(ok.status, 200);
    const stale = await admin.call('PUT', '/settings', {
      policy: { audit: { retention_days: 90 } },
      expected_policy_revision: 1,
    });
    assert.equal(stale.status, 412);
    assert.equal((await json(stale)).code, 'precondition_failed');
    const unchecked = await admin.call('PUT', '/settings', {
      policy: { audit: { retention_days: 90 } },
      expected_policy_revision: 0,
    });
    assert.equal((await json(unchecked)).policy_revision, 3);
  });

  test('case=validation: unknown members 400, each rule 422 with its field, nothing stored', async (t) => {
    const { admin } = await setup(t);
    const unknown = await admin.call('PUT', '/settings', { policy: { login: { passwrd: true } } });
    assert.equal(unknown.status, 400);
    assert.deepEqual(fieldsOf(await json(unknown)), ['policy.login.passwrd:unknown_member']);
    const cases: [Json, string[]][] = [
      [{ login: { password: false } }, ['policy.login:no_sign_in_method']],
      [{ registration: { mode: 'domain_restricted' } }, ['policy.registration.allowed_domains:required']],
      [{ webauthn: { rp_id: 'example.com' } }, ['policy.webauthn.origins:required']],
      [{ login: { sms_otp: true } }, ['policy.login.identifiers:phone_identifier_required']],
      [
        { profile: { required_fields: ['shoe_size'] } },
        ['policy.profile.required_fields[0]:unknown_attribute'],
      ],
      [
        {
          webauthn: {
            allowed_aaguids: ['00000000-0000-0000-0000-000000000001'],
            blocked_aaguids: ['00000000-0000-0000-0000-000000000002'],
          },
        },
        ['policy.webauthn.blocked_aaguids:conflict'],
      ],
      [{ audit: { retention_days: 5000 } }, ['policy.audit.retention_days:too_large']],
      [{ mfa: { allowed_factors: ['sms'] } }, ['policy.mfa.allowed_factors[0]:not_allowed']],
      [
        { webauthn: { blocked_aaguids: Array(2).fill('00000000-0000-0000-0000-000000000002') } },
        ['policy.webauthn.blocked_aaguids[1]:not_unique'],
      ],
    ];
    for (const [policy, fields] of cases) {
      const res = await admin.call('PUT', '/settings', { policy });
      assert.equal(res.status, 422, JSON.stringify(policy));
      const body = await json(res);
      assert.equal(body.code, 'validation_failed');
      assert.deepEqual(fieldsOf(body), fields, JSON.stringify(policy));
    }
    assert.equal((await json(await admin.call('GET', '/settings'))).policy_revision, 1);
    // A body without a policy misses a required member: a value error (422), not a wrong shape.
    assert.equal((await admin.call('PUT', '/settings', { expected_policy_revision: 1 })).status, 422);
  });

  test('case=permissions: read needs realm.settings.read, write realm.settings.write', async (t) => {
    const { h, realm, admin } = await setup(t);
    const reader = await callerWith(h, realm, admin, 'settings-reader', ['realm.settings.read']);
    const writer = await callerWith(h, realm, admin, 'settings-writer', ['realm.settings.write']);
    const nobody = await callerWith(h, realm, admin, 'no-settings', ['realm.users.read']);
    const patch = { policy: { data_access: { log_identity_reads: true } } };
    assert.equal((await reader.call('GET', '/settings')).status, 200);
    assert.equal((await reader.call('PUT', '/settings', patch)).status, 403);
    assert.equal((await writer.call('GET', '/settings')).status, 403);
    assert.equal((await writer.call('PUT', '/settings', patch)).status, 200);
    assert.equal((await nobody.call('GET', '/settings')).status, 403);
    assert.equal((await nobody.call('PUT', '/settings', patch)).status, 403);
  });
});
