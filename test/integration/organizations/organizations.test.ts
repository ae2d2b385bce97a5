// The organizations administration API: create, read, list, change, state transitions, deletion
// and domains, through HTTP with their stored effects, events and audit records.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { count, rows } from '../../harness/signin-kit.ts';
import {
  auditRows,
  type Body,
  body,
  createOrg,
  newUser,
  orgCaller,
  outbox,
  seedOrgGrant,
  setup,
} from './org-test-kit.ts';

describe('organizations API › create', () => {
  test('case=creates the organization and makes the creator its owner through a membership', async (t) => {
    const s = await setup(t);
    const res = await s.admin.call('POST', '/organizations', {
      slug: 'acme-corp',
      display_name: 'Acme Corp',
      locale: 'de-de',
      time_zone: 'europe/berlin',
      metadata: { tier: 'gold' },
      contact: { email: 'it@acme.example', name: 'IT', phone: '+4930123456' },
      external_id: 'crm:42',
      policy: { mfa_required: true },
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('etag'), '"1"');
    const org: Body = await body(res);
    assert.match(org.id, /^org_[0-9a-z]{26}$/);
    assert.deepEqual(
      { ...org, id: undefined, created_at: undefined, updated_at: undefined },
      {
        id: undefined,
        slug: 'acme-corp',
        display_name: 'Acme Corp',
        state: 'active',
        locale: 'de-DE',
        time_zone: 'Europe/Berlin',
        metadata: { tier: 'gold' },
        contact: { email: 'it@acme.example', name: 'IT', phone: '+4930123456' },
        external_id: 'crm:42',
        policy: { mfa_required: true, require_sso: false, audit_retention_days: 0 },
        template_name: null,
        template_version: null,
        created_at: undefined,
        updated_at: undefined,
        domains: [],
      },
    );
    const members = await body(await s.admin.call('GET', `/organizations/${org.id}/members`));
    assert.equal(members.items.length, 1);
    const [owner] = members.items;
    assert.equal(owner.user_id, s.admin.userId);
    assert.equal(owner.state, 'active');
    assert.equal(owner.source, 'creator');
    assert.deepEqual(
      owner.roles.map((r: Body) => r.name),
      ['owner'],
    );
    const [created] = await outbox(s, 'organization.created');
    assert.equal(created?.org_id, org.id);
    assert.deepEqual(created?.data, { organization_id: org.id, slug: 'acme-corp' });
    const [added] = await outbox(s, 'organization.membership.added');
    assert.deepEqual(added?.data, { user_id: s.admin.userId, membership_id: owner.id, source: 'creator' });
    const [assigned] = await outbox(s, 'authorization.role.assigned');
    assert.equal(assigned?.org_id, org.id);
    assert.equal(assigned?.data.assignment_id, owner.roles[0].assignment_id);
    const [audit] = await auditRows(s, 'organization.created');
    assert.equal(audit?.actor_id, s.admin.userId);
    assert.equal(audit?.org_id, org.id);
  });

  test('case=owner_user_id names the owner; it must be an active user', async (t) => {
    const s = await setup(t);
    const ownerId = await newUser(s);
    const org = await createOrg(s, { owner_user_id: ownerId });
    const members = await body(await s.admin.call('GET', `/organizations/${org.id}/members`));
    assert.deepEqual(
      members.items.map((m: Body) => m.user_id),
      [ownerId],
    );
    const suspended = await newUser(s);
    await s.h.ctx.db.query(`update users set state = 'suspended' where realm_id = $1 and id = $2`, [
      s.realm.id,
      suspended,
    ]);
    for (const owner_user_id of [suspended, 'usr_00000000000000000000000000']) {
      const res = await s.admin.call('POST', '/organizations', {
        slug: 'x-org',
        display_name: 'X',
        owner_user_id,
      });
      assert.equal(res.status, 422);
      assert.equal((await body(res)).errors[0].field, 'owner_user_id');
    }
    assert.equal(
      await count(s.h, `select 1 from organizations where realm_id = $1 and slug = 'x-org'`, [s.realm.id]),
      0,
    );
  });

  test('case=bad bodies: 400 for shape, 422 for values', async (t) => {
    const s = await setup(t);
    const ok = { slug: 'fine', display_name: 'Fine' };
    const cases: [unknown, number][] = [
      [{ ...ok, colour: 'red' }, 400],
      [{ ...ok, slug: 7 }, 400],
      [{ ...ok, policy: { mfa_required: 'yes' } }, 400],
      [{ ...ok, policy: { sso: true } }, 400],
      [{ display_name: 'No slug' }, 422],
      [{ ...ok, slug: 'Upper' }, 422],
      [{ ...ok, slug: 'has space' }, 422],
      [{ ...ok, slug: 'a'.repeat(65) }, 422],
      [{ ...ok, display_name: '' }, 422],
      [{ ...ok, display_name: 'd'.repeat(201) }, 422],
      [{ ...ok, time_zone: 'Mars/Olympus' }, 422],
      [{ ...ok, time_zone: '+01:00' }, 422],
      [{ ...ok, locale: 'not a locale!' }, 422],
      [{ ...ok, contact: { email: 'nope' } }, 422],
      [{ ...ok, external_id: 'e'.repeat(256) }, 422],
      [{ ...ok, policy: { audit_retention_days: 29 } }, 422],
      [{ ...ok, policy: { audit_retention_days: 3651 } }, 422],
      [{ ...ok, policy: { audit_retention_days: 1 } }, 422],
      [{ ...ok, owner_user_id: 'bob' }, 422],
    ];
    for (const [input, status] of cases) {
      const res = await s.admin.call('POST', '/organizations', input);
      assert.equal(res.status, status, JSON.stringify(input).slice(0, 120));
      assert.equal((await body(res)).code, status === 400 ? 'invalid_request' : 'validation_failed');
    }
    assert.equal(await count(s.h, 'select 1 from organizations where realm_id = $1', [s.realm.id]), 0);
    for (const days of [0, 30, 3650]) {
      const org = await createOrg(s, { policy: { audit_retention_days: days } });
      assert.equal(org.policy.audit_retention_days, days);
    }
    const edge = await createOrg(s, { slug: 'a'.repeat(64), display_name: 'd'.repeat(200) });
    assert.equal(edge.slug.length, 64);
  });

  test('case=metadata up to limits.metadata_bytes is kept; one byte more is refused', async (t) => {
    const s = await setup(t);
    const limit = s.h.ctx.config.limits.metadataBytes;
    // {"k":"..."} is 8 bytes around the value.
    const exact = { k: 'x'.repeat(limit - 8) };
    assert.equal(Buffer.byteLength(JSON.stringify(exact)), limit);
    const org = await createOrg(s, { metadata: exact });
    assert.deepEqual(org.metadata, exact);
    const over = await s.admin.call('POST', '/organizations', {
      slug: 'over',
      display_name: 'Over',
      metadata: { k: 'x'.repeat(limit - 7) },
    });
    assert.equal(over.status, 422);
    assert.equal((await body(over)).errors[0].field, 'metadata');
    const patch = await s.admin.call('PATCH', `/organizations/${org.id}`, {
      metadata: { k: 'x'.repeat(limit - 7) },
    });
    assert.equal(patch.status, 422);
  });

  test('case=slug is unique ignoring case and external_id unique per realm; other realms are separate', async (t) => {
    const s = await setup(t);
    await createOrg(s, { slug: 'taken', external_id: 'ext-1' });
    await s.h.ctx.db.query(
      `update organizations set slug = 'Legacy' where realm_id = $1 and slug = 'taken'`,
      [s.realm.id],
    );
    for (const input of [
      { slug: 'legacy', display_name: 'L' },
      { slug: 'other', display_name: 'O', external_id: 'ext-1' },
    ]) {
      const res = await s.admin.call('POST', '/organizations', input);
      assert.equal(res.status, 409, JSON.stringify(input));
      assert.equal((await body(res)).code, 'conflict');
    }
    const other = await s.h.createRealm();
    const otherAdmin = await apiCaller(s.h, other);
    const res = await otherAdmin.call('POST', '/organizations', {
      slug: 'legacy',
      display_name: 'L',
      external_id: 'ext-1',
    });
    assert.equal(res.status, 201);
  });

  test('case=a caller without realm.organizations.create gets 403', async (t) => {
    const s = await setup(t);
    const nobody = await apiCaller(s.h, s.realm, { roles: [] });
    const res = await nobody.call('POST', '/organizations', { slug: 'x', display_name: 'X' });
    assert.equal(res.status, 403);
    assert.equal((await nobody.call('GET', '/organizations')).status, 403);
  });
});

describe('organizations API › read, list, change', () => {
  test('case=keyset pages with limit and cursor, filters by state and slug', async (t) => {
    const s = await setup(t);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await createOrg(s, { slug: `page-${i}` })).id);
      s.clock.advance(1); // ids sort by time; within one millisecond their order is random
    }
    await s.admin.call('POST', `/organizations/${ids[1]}/suspend`, {});
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await s.admin.call('GET', `/organizations?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.status, 200);
      const page: Body = await body(res);
      assert.ok(page.items.length <= 2);
      seen.push(...page.items.map((o: Body) => o.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(seen, ids);
    const suspended = await body(await s.admin.call('GET', '/organizations?state=suspended'));
    assert.deepEqual(
      suspended.items.map((o: Body) => o.id),
      [ids[1]],
    );
    const bySlug = await body(await s.admin.call('GET', '/organizations?slug=page-3'));
    assert.deepEqual(
      bySlug.items.map((o: Body) => o.id),
      [ids[3]],
    );
    const first = await body(await s.admin.call('GET', '/organizations?limit=1'));
    for (const query of [
      'state=gone',
      'colour=red',
      'limit=0',
      `cursor=${first.next_cursor}&state=active`,
      'cursor=%%%',
    ]) {
      const res = await s.admin.call('GET', `/organizations?${query}`);
      assert.equal(res.status, 400, query);
      assert.equal((await body(res)).code, 'invalid_request');
    }
    const big = await body(await s.admin.call('GET', '/organizations?limit=100000'));
    assert.equal(big.items.length, 5, 'a larger limit is reduced, not refused');
  });

  test('case=PATCH merges policy member by member, bumps the ETag and honours If-Match', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s, {
      policy: { mfa_required: true, audit_retention_days: 90 },
      locale: 'en',
    });
    const stale = await s.admin.call(
      'PATCH',
      `/organizations/${org.id}`,
      { display_name: 'New' },
      { 'if-match': '"7"' },
    );
    assert.equal(stale.status, 412);
    assert.equal((await body(stale)).code, 'precondition_failed');
    const res = await s.admin.call(
      'PATCH',
      `/organizations/${org.id}`,
      { display_name: 'New', policy: { require_sso: true }, locale: '', contact: { name: 'Ops' } },
      { 'if-match': '"1"' },
    );
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('etag'), '"2"');
    const changed: Body = await body(res);
    assert.equal(changed.display_name, 'New');
    assert.equal(changed.locale, null, 'an empty string clears');
    assert.deepEqual(changed.contact, { name: 'Ops' });
    assert.deepEqual(changed.policy, { mfa_required: true, require_sso: true, audit_retention_days: 90 });
    const read = await s.admin.call('GET', `/organizations/${org.id}`);
    assert.equal(read.headers.get('etag'), '"2"');
    assert.deepEqual(await body(read), changed);
    for (const [input, status] of [
      [{}, 400],
      [{ slug: 'renamed' }, 400],
      [{ policy: { audit_retention_days: 10 } }, 422],
    ] as const) {
      assert.equal((await s.admin.call('PATCH', `/organizations/${org.id}`, input)).status, status);
    }
    assert.equal(
      (await body(await s.admin.call('GET', `/organizations/${org.id}`))).policy.audit_retention_days,
      90,
    );
    const [audit] = await auditRows(s, 'organization.updated');
    assert.deepEqual(audit?.data.changed.sort(), ['contact', 'displayName', 'locale', 'policy']);
  });

  test('case=unknown or malformed organization ids are 404, as is another realm’s organization', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    for (const id of ['org_00000000000000000000000000', 'nope']) {
      assert.equal((await s.admin.call('GET', `/organizations/${id}`)).status, 404);
    }
    const other = await s.h.createRealm();
    const otherAdmin = await apiCaller(s.h, other);
    assert.equal((await otherAdmin.call('GET', `/organizations/${org.id}`)).status, 404);
    assert.equal((await otherAdmin.call('POST', `/organizations/${org.id}/suspend`, {})).status, 404);
  });
});

describe('organizations API › state', () => {
  test('case=every valid transition with its event; invalid ones are 409', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const move = (action: string) => {
      s.clock.advance(1); // event ids sort by time
      return s.admin.call('POST', `/organizations/${org.id}/${action}`, { reason: 'test' });
    };
    const expect = async (action: string, status: number, state?: string) => {
      const res = await move(action);
      assert.equal(res.status, status, action);
      const b = await body(res);
      if (state) assert.equal(b.state, state);
      else assert.equal(b.code, 'conflict');
    };
    await expect('reactivate', 409);
    await expect('suspend', 200, 'suspended');
    await expect('suspend', 409);
    await expect('reactivate', 200, 'active');
    await expect('archive', 200, 'archived');
    await expect('suspend', 409);
    await expect('archive', 409);
    await expect('reactivate', 200, 'active');
    await expect('suspend', 200, 'suspended');
    await expect('archive', 200, 'archived');
    const events = await rows(
      s.h,
      `select event_type, org_id, data from outbox where realm_id = $1 and event_type like 'organization.%'
          and event_type not like 'organization.membership.%' and event_type <> 'organization.created' order by id`,
      [s.realm.id],
    );
    assert.deepEqual(
      events.map((e) => [e.event_type, e.org_id, e.data.state, e.data.organization_id]),
      [
        ['organization.suspended', org.id, 'suspended', org.id],
        ['organization.reactivated', org.id, 'active', org.id],
        ['organization.archived', org.id, 'archived', org.id],
        ['organization.reactivated', org.id, 'active', org.id],
        ['organization.suspended', org.id, 'suspended', org.id],
        ['organization.archived', org.id, 'archived', org.id],
      ],
    );
    const [audit] = await auditRows(s, 'organization.suspended');
    assert.equal(audit?.reason, 'test');
  });

  test('case=suspension revokes org-bound grants, families and opaque tokens; other organizations keep theirs', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const other = await createOrg(s);
    const user = await newUser(s);
    const bound = await seedOrgGrant(s, user, org.id);
    const elsewhere = await seedOrgGrant(s, user, other.id);
    assert.deepEqual(await bound.live(), { grant: true, family: true, opaque: true });
    assert.equal((await s.admin.call('POST', `/organizations/${org.id}/suspend`)).status, 200);
    assert.deepEqual(await bound.live(), { grant: false, family: false, opaque: false });
    assert.deepEqual(await elsewhere.live(), { grant: true, family: true, opaque: true });
    assert.equal((await s.admin.call('POST', `/organizations/${other.id}/archive`)).status, 200);
    assert.deepEqual(await elsewhere.live(), { grant: false, family: false, opaque: false });
  });

  test('case=an organization administrator loses its powers while the organization is suspended', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const orgAdmin = await orgCaller(s, org.id, 'admin');
    assert.equal((await orgAdmin.call('GET', `/organizations/${org.id}`)).status, 200);
    await s.admin.call('POST', `/organizations/${org.id}/suspend`);
    assert.equal((await orgAdmin.call('GET', `/organizations/${org.id}`)).status, 404);
    assert.equal((await orgAdmin.call('POST', `/organizations/${org.id}/reactivate`)).status, 404);
  });
});

describe('organizations API › deletion', () => {
  test('case=202 with a queued job, the request-time effects, and 409 while the job is queued', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const user = await newUser(s);
    const grant = await seedOrgGrant(s, user, org.id);
    const invited = await body(
      await s.admin.call('POST', `/organizations/${org.id}/invitations`, { user_id: user }),
    );
    const now = s.clock.now();
    await s.h.ctx.db.query(
      `insert into projects (realm_id, id, name, environment, state, owner_organization_id, created_at, updated_at)
       values ($1, 'prj_a', 'p', 'production', 'active', $2, $3, $3)`,
      [s.realm.id, org.id, now],
    );
    await s.h.ctx.db.query(
      `insert into service_principals (realm_id, id, state, owner_organization_id, created_at, updated_at)
       values ($1, 'spr_a', 'active', $2, $3, $3)`,
      [s.realm.id, org.id, now],
    );

    const res = await s.admin.call('DELETE', `/organizations/${org.id}`);
    assert.equal(res.status, 202);
    const started: Body = await body(res);
    assert.equal(started.state, 'deleting');
    assert.match(started.job_id, /^job_[0-9a-z]{26}$/);
    const [job] = await rows(s.h, 'select * from jobs where realm_id = $1 and id = $2', [
      s.realm.id,
      started.job_id,
    ]);
    assert.equal(job?.type, 'organization.delete');
    assert.equal(job?.state, 'queued');
    assert.equal(job?.organization_id, org.id);
    assert.equal(job?.requested_by_id, s.admin.userId);
    assert.deepEqual(await grant.live(), { grant: false, family: false, opaque: false });
    const [inv] = await rows(s.h, 'select state from membership_requests where realm_id = $1 and id = $2', [
      s.realm.id,
      invited.id,
    ]);
    assert.equal(inv?.state, 'revoked');
    const [project] = await rows(s.h, `select state from projects where realm_id = $1 and id = 'prj_a'`, [
      s.realm.id,
    ]);
    assert.equal(project?.state, 'suspended');
    const [sp] = await rows(
      s.h,
      `select state from service_principals where realm_id = $1 and id = 'spr_a'`,
      [s.realm.id],
    );
    assert.equal(sp?.state, 'disabled');
    const [deleted] = await outbox(s, 'organization.deleted');
    assert.equal(deleted?.org_id, org.id);
    assert.deepEqual(deleted?.data, { organization_id: org.id });

    const again = await s.admin.call('DELETE', `/organizations/${org.id}`);
    assert.equal(again.status, 409);
    const read = await body(await s.admin.call('GET', `/organizations/${org.id}`));
    assert.equal(read.state, 'deleting');
    for (const [method, path, input] of [
      ['PATCH', '', { display_name: 'x' }],
      ['POST', '/suspend', {}],
      ['POST', '/reactivate', {}],
      ['POST', '/domains', { domain: 'late.example' }],
      ['POST', '/members', { user_id: user }],
    ] as const) {
      const r = await s.admin.call(method, `/organizations/${org.id}${path}`, input);
      assert.equal(r.status, 409, `${method} ${path}`);
    }
    const active = await body(await s.admin.call('GET', '/organizations?state=active'));
    assert.equal(active.items.length, 0);

    // A job that ended without finishing (say dead-lettered) lets a new DELETE queue another one.
    await s.h.ctx.db.query(`update jobs set state = 'dead_letter' where realm_id = $1 and id = $2`, [
      s.realm.id,
      started.job_id,
    ]);
    const retry = await s.admin.call('DELETE', `/organizations/${org.id}`);
    assert.equal(retry.status, 202);
    assert.notEqual((await body(retry)).job_id, started.job_id);
  });

  test('case=needs org.delete and a recent sign-in', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const stale = await apiCaller(s.h, s.realm);
    s.h.clock.advance(11 * 60_000);
    const res = await stale.call('DELETE', `/organizations/${org.id}`);
    assert.equal(res.status, 403);
    const problem: Body = await body(res);
    assert.equal(problem.code, 'step_up_required');
    assert.equal(problem.obligation.type, 'reauthenticate');
    const orgAdmin = await orgCaller(s, org.id, 'admin');
    assert.equal(
      (await orgAdmin.call('DELETE', `/organizations/${org.id}`)).status,
      403,
      'admin lacks org.delete',
    );
    const orgOwner = await orgCaller(s, org.id, 'owner');
    assert.equal((await orgOwner.call('DELETE', `/organizations/${org.id}`)).status, 202);
    assert.equal(await count(s.h, 'select 1 from jobs where realm_id = $1', [s.realm.id]), 1);
  });
});

describe('organizations API › domains', () => {
  test('case=a domain belongs to one organization per realm, shows in the organization, and is audited', async (t) => {
    const s = await setup(t);
    const a = await createOrg(s);
    const b = await createOrg(s);
    const res = await s.admin.call('POST', `/organizations/${a.id}/domains`, { domain: 'acme.example' });
    assert.equal(res.status, 201);
    assert.equal((await body(res)).domain, 'acme.example');
    for (const [org, domain] of [
      [a, 'acme.example'],
      [b, 'acme.example'],
    ]) {
      const dup = await s.admin.call('POST', `/organizations/${org.id}/domains`, { domain });
      assert.equal(dup.status, 409);
    }
    for (const domain of ['ACME.example', 'localhost', 'a..example', '-x.example', 'x.123', 'a_b.example']) {
      const bad = await s.admin.call('POST', `/organizations/${b.id}/domains`, { domain });
      assert.equal(bad.status, 422, domain);
    }
    const read = await s.admin.call('GET', `/organizations/${a.id}`);
    assert.equal(read.headers.get('etag'), '"2"', 'a domain change moves the ETag');
    assert.deepEqual(
      (await body(read)).domains.map((d: Body) => [d.domain, d.verified]),
      [['acme.example', false]],
    );
    assert.equal((await s.admin.call('DELETE', `/organizations/${b.id}/domains/acme.example`)).status, 404);
    assert.equal((await s.admin.call('DELETE', `/organizations/${a.id}/domains/acme.example`)).status, 204);
    assert.equal(
      (await s.admin.call('POST', `/organizations/${b.id}/domains`, { domain: 'acme.example' })).status,
      201,
    );
    assert.equal((await auditRows(s, 'organization.domain.added')).length, 2);
    assert.equal((await auditRows(s, 'organization.domain.removed')).length, 1);
    assert.equal(
      await count(s.h, `select 1 from outbox where realm_id = $1 and event_type like '%domain%'`, [
        s.realm.id,
      ]),
      0,
      'domain changes emit no event',
    );
  });
});
