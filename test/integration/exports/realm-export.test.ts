// The realm data export (spec doc 2, Realm data export; Jobs and exports): NDJSON in the spec's
// order with exactly the listed fields per section, nothing it excludes, through the job flow.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../../src/platform/ids.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { seedMembership } from '../../harness/org-kit.ts';
import { createOrg, newUser, type OrgSetup, setup } from '../organizations/org-test-kit.ts';
import {
  download,
  keysOf,
  memberNames,
  PASSKEY_MARKER,
  requestExport,
  runJobs,
  SECRET_MEMBER,
  seedPasskey,
} from './exports-kit.ts';

const ORDER = [
  'header',
  'configuration',
  'user',
  'organization',
  'membership',
  'group',
  'role_assignment',
  'authorization_policy',
  'project',
  'service_principal',
  'identity_provider',
  'webhook',
  'hook',
];

// The spec's field list of each section, sorted.
const FIELDS: Record<string, string[]> = {
  user: [
    'admin_metadata',
    'created_at',
    'created_via',
    'credentials',
    'display_name',
    'external_ids',
    'family_name',
    'federated_identities',
    'given_name',
    'id',
    'identifiers',
    'is_guest',
    'last_login_at',
    'locale',
    'profile',
    'protected',
    'required_actions',
    'state',
    'updated_at',
    'zoneinfo',
  ],
  organization: [
    'contact',
    'created_at',
    'display_name',
    'domains',
    'external_id',
    'id',
    'locale',
    'metadata',
    'policy',
    'slug',
    'state',
    'template_name',
    'template_version',
    'time_zone',
    'updated_at',
  ],
  membership: [
    'created_at',
    'expires_at',
    'external_id',
    'id',
    'joined_at',
    'metadata',
    'organization_id',
    'roles',
    'source',
    'state',
    'user_id',
  ],
  group: [
    'created_at',
    'description',
    'dynamic_rule',
    'external_id',
    'id',
    'members',
    'metadata',
    'name',
    'organization_id',
    'parent_id',
    'source',
  ],
  role_assignment: [
    'conditions',
    'created_at',
    'expires_at',
    'id',
    'reason',
    'role',
    'role_id',
    'scope_id',
    'scope_type',
    'source',
    'subject_id',
    'subject_type',
    'valid_from',
  ],
  project: [
    'created_at',
    'description',
    'environment',
    'id',
    'name',
    'owner_organization_id',
    'owner_user_id',
    'state',
  ],
  service_principal: [
    'allowed_organization_ids',
    'created_at',
    'description',
    'id',
    'is_agent',
    'name',
    'owner_organization_id',
    'owner_user_id',
    'state',
  ],
  identity_provider: [
    'adapter',
    'alias',
    'claim_mapping',
    'config',
    'created_at',
    'display_name',
    'id',
    'issuer',
    'jit_default_role_id',
    'jit_provisioning',
    'kind',
    'linking_policy',
    'organization_id',
    'owner_user_id',
    'state',
    'trust_upstream_mfa',
  ],
  hook: [
    'allow_private_network',
    'client_ids',
    'created_at',
    'failure_mode',
    'id',
    'kind',
    'name',
    'owner_user_id',
    'state',
    'timeout_ms',
    'url',
  ],
  webhook: [
    'allow_private_network',
    'created_at',
    'destination_url',
    'event_types',
    'id',
    'name',
    'organization_id',
    'owner_user_id',
    'payload_form',
    'state',
  ],
};

const MARK = {
  webhook: 'WEBHOOK-SECRET-MARKER',
  hook: 'HOOK-SECRET-MARKER',
  provider: 'PROVIDER-SECRET-MARKER',
  providerRef: 'env:PROVIDER_REF_MARKER',
  totp: 'TOTP-SEED-MARKER',
};

/** A realm with one of everything the export carries, plus things it must leave out. */
async function seedRealm(s: OrgSetup) {
  const db = s.h.ctx.db;
  const now = s.clock.now();
  const member = await newUser(s);
  const gone = await newUser(s);
  await db.query(`update users set state = 'deleted' where realm_id = $1 and id = $2`, [s.realm.id, gone]);
  await db.query(
    `update users set attributes = '{"given_name":"Ada","locale":"en","nickname":"ada"}' where realm_id = $1 and id = $2`,
    [s.realm.id, member],
  );
  await db.query(
    `insert into totp_credentials (realm_id, user_id, secret_sealed, created_at) values ($1, $2, $3, $4)`,
    [s.realm.id, member, MARK.totp, now],
  );
  await seedPasskey(db, s.realm.id, member, 'Laptop', now);
  await seedPasskey(db, s.realm.id, member, 'Phone', now);
  const org = await createOrg(s);
  await db.query(
    `insert into organization_domains (realm_id, domain, organization_id, verified, created_at) values ($1, 'ex.example.com', $2, true, $3)`,
    [s.realm.id, org.id, now],
  );
  await seedMembership(s.h, s.realm, org.id, member);
  const removedMembership = await seedMembership(s.h, s.realm, org.id, gone, 'removed');
  const groupId = newId('grp', now.getTime());
  await db.query(
    `insert into groups (realm_id, id, organization_id, depth, name, created_at, updated_at) values ($1, $2, $3, 1, 'Team', $4, $4)`,
    [s.realm.id, groupId, org.id, now],
  );
  await db.query(
    `insert into group_members (realm_id, group_id, subject_type, subject_id, created_at) values ($1, $2, 'user', $3, $4)`,
    [s.realm.id, groupId, member, now],
  );
  await db.query(
    `insert into projects (realm_id, id, name, environment, state, owner_organization_id, created_at, updated_at)
     values ($1, $2, 'Shop', 'production', 'active', $3, $4, $4)`,
    [s.realm.id, newId('prj', now.getTime()), org.id, now],
  );
  await db.query(
    `insert into service_principals (realm_id, id, state, name, is_agent, created_at, updated_at) values
       ($1, $2, 'active', 'Robot', false, $4, $4), ($1, $3, 'deleted', 'Gone', false, $4, $4)`,
    [s.realm.id, newId('spr', now.getTime()), newId('spr', now.getTime()), now],
  );
  await db.query(
    `insert into webhook_subscriptions (realm_id, id, name, destination_url, event_types, secret_sealed, created_at, updated_at)
     values ($1, $2, 'Hook', 'https://hooks.example.com/in', '["user.created"]', $3, $4, $4)`,
    [s.realm.id, newId('whk', now.getTime()), MARK.webhook, now],
  );
  // Two hooks inserted out of id order: the lines come sorted by id.
  await db.query(
    `insert into hooks (realm_id, id, name, kind, url, timeout_ms, failure_mode, client_ids, secret_sealed,
       created_at, updated_at)
     values ($1, $2, 'Claims', 'before_token_issuance', 'https://hooks.example.com/claims', 2000, 'fail_open',
       '{web-app}', $4, $5, $5),
            ($1, $3, 'Gate', 'before_registration', 'https://hooks.example.com/gate', 500, 'fail_closed',
       '{}', $4, $5, $5)`,
    [s.realm.id, newId('hok', now.getTime() + 1), newId('hok', now.getTime()), MARK.hook, now],
  );
  const providerId = newId('idp', now.getTime());
  await db.query(
    `insert into identity_providers (realm_id, id, alias, display_name, kind, adapter, state, issuer, config,
       linking_policy, jit_provisioning, trust_upstream_mfa, claim_mapping, client_secret_sealed, created_at, updated_at)
     values ($1, $2, 'corp', 'Corp', 'oidc', 'generic', 'active', 'https://idp.example.com', '{"client_id":"pa"}',
       'prove_existing', true, false, '{}', $3, $4, $4),
            ($1, $5, 'corp2', 'Corp 2', 'oidc', 'generic', 'active', 'https://idp2.example.com', '{"client_id":"pa"}',
       'prove_existing', true, false, '{}', null, $4, $4)`,
    [s.realm.id, providerId, MARK.provider, now, newId('idp', now.getTime())],
  );
  await db.query(
    `update identity_providers set client_secret_ref = $2 where realm_id = $1 and alias = 'corp2'`,
    [s.realm.id, MARK.providerRef],
  );
  await db.query(
    `insert into linked_identities (realm_id, id, user_id, provider_id, upstream_issuer, upstream_subject, provenance,
       created_at, updated_at) values ($1, $2, $3, $4, 'https://idp.example.com', 'upstream-42', 'jit', $5, $5)`,
    [s.realm.id, newId('lid', now.getTime()), member, providerId, now],
  );
  return { member, gone, org, removedMembership, providerId };
}

describe('exports › realm data', () => {
  test('case=the file is the header, the configuration and each section in order with exactly its fields', async (t) => {
    const s = await setup(t);
    const seeded = await seedRealm(s);
    // No body, sent as many clients do: a JSON content type over zero bytes.
    const jobId = await requestExport(s.admin, '/data-exports', '');
    assert.deepEqual(await runJobs(s), { succeeded: 1 });
    const file = await download(s.admin, jobId);
    assert.equal(file.contentType, 'application/x-ndjson');
    assert.equal(file.disposition, 'attachment; filename="export.ndjson"');
    assert.ok(file.text.endsWith('\n'));
    const lines = file.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as { kind: string; data: Record<string, unknown> });
    for (const l of lines) assert.deepEqual(keysOf(l), ['data', 'kind']);

    const [header, configuration] = lines;
    assert.equal(header?.kind, 'header');
    assert.deepEqual(keysOf(header?.data), ['excluded', 'format', 'generated_at', 'realm']);
    assert.equal(header?.data.format, 'service.realm-export.v1');
    assert.deepEqual(header?.data.realm, {
      id: s.realm.id,
      name: s.realm.name,
      display_name: s.realm.display_name,
      issuer: `${s.h.ctx.config.server.publicOrigin}/realms/${s.realm.name}`,
    });
    for (const category of [
      'password_verifiers',
      'totp_seeds',
      'sessions',
      'audit_evidence',
      'deleted_accounts',
    ])
      assert.ok(((header?.data.excluded ?? []) as string[]).includes(category), category);
    assert.equal(configuration?.kind, 'configuration');
    assert.equal(configuration?.data.format, 'service.realm-config.v1');

    // Sections in the spec's order, each sorted by id.
    const kinds = lines.map((l) => l.kind);
    const positions = kinds.map((k) => ORDER.indexOf(k));
    assert.ok(!positions.includes(-1), `unknown kind in ${kinds}`);
    assert.deepEqual(
      [...positions].sort((a, b) => a - b),
      positions,
      'sections in order',
    );
    for (const kind of ORDER.slice(2)) {
      const ids = lines.filter((l) => l.kind === kind).map((l) => String(l.data.id));
      assert.deepEqual([...ids].sort(), ids, `${kind} sorted by id`);
    }
    for (const l of lines.slice(2)) {
      const expected = FIELDS[l.kind];
      assert.ok(expected, `a ${l.kind} line is not expected with this data`);
      assert.deepEqual(keysOf(l.data), [...expected].sort(), `${l.kind} fields`);
    }
    const of = (kind: string) => lines.filter((l) => l.kind === kind).map((l) => l.data);

    // Users: every account but the deleted one, with identifiers and a credential summary only.
    const users = of('user');
    assert.ok(users.some((u) => u.id === seeded.member));
    assert.ok(!users.some((u) => u.id === seeded.gone), 'deleted accounts are left out');
    const member = users.find((u) => u.id === seeded.member) as Record<string, unknown>;
    assert.equal(member.given_name, 'Ada');
    assert.equal(member.locale, 'en');
    assert.deepEqual(member.profile, { nickname: 'ada' });
    assert.deepEqual(member.credentials, { password: true, totp: true, hotp: false, passkeys: 2 });
    assert.deepEqual(member.federated_identities, [
      {
        provider_id: seeded.providerId,
        upstream_issuer: 'https://idp.example.com',
        upstream_subject: 'upstream-42',
      },
    ]);
    for (const i of member.identifiers as object[])
      assert.deepEqual(keysOf(i), ['primary', 'type', 'value', 'verified', 'verified_at']);

    // Organizations with domains; memberships that are not removed; groups with members.
    const org = of('organization').find((o) => o.id === seeded.org.id) as Record<string, unknown>;
    assert.deepEqual(
      (org.domains as { domain: string }[]).map((d) => d.domain),
      ['ex.example.com'],
    );
    assert.ok(
      !of('membership').some((m) => m.id === seeded.removedMembership),
      'removed memberships are left out',
    );
    assert.ok(of('membership').some((m) => m.user_id === seeded.member));
    assert.deepEqual(of('group')[0]?.members, [{ subject_type: 'user', subject_id: seeded.member }]);
    // Role assignments held through a membership are listed with the membership only.
    const ownerMembership = of('membership').find((m) => m.user_id === s.admin.userId);
    assert.ok(
      ((ownerMembership?.roles ?? []) as unknown[]).length > 0,
      'the owner role rides on the membership',
    );
    assert.ok(of('role_assignment').some((a) => a.subject_id === s.admin.userId && a.role === 'realm-admin'));
    assert.equal(of('service_principal').length, 1, 'deleted principals are left out');
    assert.equal(of('project').length, 1);
    assert.equal(of('webhook').length, 1);
    assert.deepEqual(
      of('hook').map((h) => [h.name, h.kind, h.timeout_ms, h.failure_mode, h.client_ids, h.state]),
      [
        ['Gate', 'before_registration', 500, 'fail_closed', [], 'active'],
        ['Claims', 'before_token_issuance', 2000, 'fail_open', ['web-app'], 'active'],
      ],
    );
    assert.deepEqual(
      of('identity_provider')
        .map((p) => p.alias)
        .sort(),
      ['corp', 'corp2'],
    );

    // Nothing secret: no secret-bearing member anywhere, no stored secret or verifier in the text.
    const names = memberNames(lines.slice(2).map((l) => l.data));
    for (const n of names) assert.doesNotMatch(n, SECRET_MEMBER, `member ${n}`);
    assert.ok(!file.text.includes(MARK.webhook), 'no webhook signing secret');
    assert.ok(!file.text.includes(MARK.hook), 'no hook signing secret');
    assert.ok(!file.text.includes(MARK.provider), 'no provider client secret');
    assert.ok(!file.text.includes('PROVIDER_REF_MARKER'), 'no provider secret reference');
    assert.ok(!file.text.includes(MARK.totp), 'no TOTP seed');
    assert.ok(!file.text.includes(PASSKEY_MARKER), 'no passkey credential');
    const hashes = await s.h.ctx.db.query<{ hash: string }>(
      'select hash from password_credentials where realm_id = $1',
      [s.realm.id],
    );
    for (const h of hashes.rows) assert.ok(!file.text.includes(h.hash), 'no password verifier');
    assert.ok(!file.text.includes(s.admin.sessionId), 'no sessions');
  });

  test('case=the export needs realm.data.export and a recent sign-in', async (t) => {
    const s = await setup(t);
    const plain = await apiCaller(s.h, s.realm, { roles: [] });
    const refused = await plain.call('POST', '/data-exports');
    assert.equal(refused.status, 403);
    s.clock.advance(11 * 60_000);
    const stale = await s.admin.call('POST', '/data-exports');
    assert.equal(stale.status, 403);
    assert.equal(((await stale.json()) as { code: string }).code, 'step_up_required');
  });

  test('case=a requester who lost realm.data.export makes the job dead-letter, and cannot download', async (t) => {
    const s = await setup(t);
    const jobId = await requestExport(s.admin, '/data-exports');
    await s.h.ctx.db.query(
      `delete from role_assignments where realm_id = $1 and subject_id = $2 and scope_type = 'realm'`,
      [s.realm.id, s.admin.userId],
    );
    assert.deepEqual(await runJobs(s), { dead_letter: 1 });
    const row = await s.h.ctx.db.query<{ last_error: string }>('select last_error from jobs where id = $1', [
      jobId,
    ]);
    assert.match(String(row.rows[0]?.last_error), /realm\.data\.export/);
  });
});
