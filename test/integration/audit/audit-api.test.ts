// The audit API (spec doc 2, Audit endpoints; docs/audit.md): reading events with filters and
// cursor pages, legal holds, corrections and application activity, each with its permission.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { audits, events, rows } from '../../harness/signin-kit.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked member by member
type Body = any;

async function roleWith(h: Harness, realm: RealmRow, name: string, permissions: string[]): Promise<string> {
  await h.ctx.db.query('insert into roles (realm_id, id, name, permissions) values ($1, $2, $3, $4)', [
    realm.id,
    `rol_${name}`,
    name,
    permissions,
  ]);
  return name;
}

async function setup(t: TestContext) {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  return { h, realm, admin };
}

describe('audit API › GET /audit-events', () => {
  test('case=filters, newest first, cursor pages, and realm.audit.export required', async (t) => {
    const { h, realm, admin } = await setup(t);
    const a = await h.createUser(realm, { email: 'a@example.com' });
    const b = await h.createUser(realm, { email: 'b@example.com' });
    for (const u of [a, b]) {
      assert.equal(
        (await admin.call('POST', `/users/${u.id}/suspend`, { reason: 'fraud review' })).status,
        200,
      );
    }
    const all = await admin.call('GET', '/audit-events?type=user.suspended');
    assert.equal(all.status, 200);
    const body: Body = await all.json();
    assert.deepEqual(
      body.items.map((e: Body) => e.subject.id),
      [b.id, a.id],
      'newest first',
    );
    const first = body.items[0];
    assert.equal(first.category, 'security');
    assert.deepEqual(first.actor, { type: 'user', id: admin.userId });
    assert.match(first.correlation_id, /.+/);
    assert.equal(first.content_hash, null, 'not sealed yet');

    const bySubject: Body = await (await admin.call('GET', `/audit-events?subject_id=${a.id}`)).json();
    assert.ok(bySubject.items.length >= 1);
    assert.ok(bySubject.items.every((e: Body) => e.subject?.id === a.id));
    const byActor: Body = await (
      await admin.call('GET', `/audit-events?actor_id=${admin.userId}&category=security`)
    ).json();
    assert.ok(byActor.items.every((e: Body) => e.actor.id === admin.userId && e.category === 'security'));
    assert.ok(byActor.items.length >= 2);

    // Pages of one, joined, are the whole list.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/audit-events?type=user.suspended&limit=1${cursor ? `&cursor=${cursor}` : ''}`;
      const page: Body = await (await admin.call('GET', q)).json();
      seen.push(...page.items.map((e: Body) => e.id));
      cursor = page.next_cursor;
    } while (cursor);
    assert.deepEqual(
      seen,
      body.items.map((e: Body) => e.id),
    );
    // A cursor of one filter is refused under another.
    const p1: Body = await (await admin.call('GET', '/audit-events?type=user.suspended&limit=1')).json();
    assert.equal(
      (await admin.call('GET', `/audit-events?type=user.created&cursor=${p1.next_cursor}`)).status,
      400,
    );

    // from / to bound occurred_at; malformed dates are 400.
    const future = new Date(h.clock.now().getTime() + 3600_000).toISOString();
    const none: Body = await (await admin.call('GET', `/audit-events?from=${future}`)).json();
    assert.deepEqual(none.items, []);
    const before: Body = await (
      await admin.call('GET', `/audit-events?to=${future}&type=user.suspended`)
    ).json();
    assert.equal(before.items.length, 2);
    assert.equal((await admin.call('GET', '/audit-events?from=yesterday')).status, 400);
    assert.equal((await admin.call('GET', '/audit-events?colour=red')).status, 400);

    const reader = await apiCaller(h, realm, {
      roles: [await roleWith(h, realm, 'users-reader', ['realm.users.read'])],
    });
    const refused = await reader.call('GET', '/audit-events');
    assert.equal(refused.status, 403);
    assert.equal(((await refused.json()) as Body).code, 'forbidden');
  });

  test('case=another realm sees none of these events', async (t) => {
    const { h, realm, admin } = await setup(t);
    const other = await h.createRealm();
    const otherAdmin = await apiCaller(h, other);
    await admin.call('POST', '/activity-events', { activity: 'invoice.approved' });
    const mine: Body = await (await admin.call('GET', '/audit-events?type=activity.reported')).json();
    assert.equal(mine.items.length, 1);
    const theirs: Body = await (await otherAdmin.call('GET', '/audit-events?type=activity.reported')).json();
    assert.deepEqual(theirs.items, []);
    assert.ok(realm.id !== other.id);
  });
});

describe('audit API › legal holds', () => {
  test('case=place, list active first, release once; release emits only security.alert', async (t) => {
    const { h, realm, admin } = await setup(t);
    const r1 = await admin.call('POST', '/audit-legal-holds', {
      reason: 'litigation 42',
      subject_id: 'usr_x',
    });
    assert.equal(r1.status, 201);
    const h1: Body = await r1.json();
    assert.match(h1.id, /^alh_[0-9a-z]{26}$/);
    assert.equal(h1.subject_id, 'usr_x');
    assert.equal(h1.created_by_id, admin.userId);
    assert.equal(h1.released_at, null);
    const r2 = await admin.call('POST', '/audit-legal-holds', {
      reason: 'regulator',
      organization_id: 'org_y',
    });
    const h2: Body = await r2.json();

    const eventsBefore = (await rows(h, 'select event_type from outbox where realm_id = $1', [realm.id]))
      .length;
    const released = await admin.call('POST', `/audit-legal-holds/${h1.id}/release`);
    assert.equal(released.status, 200);
    const rel: Body = await released.json();
    assert.equal(rel.released_by_id, admin.userId);
    assert.equal(
      (await admin.call('POST', `/audit-legal-holds/${h1.id}/release`)).status,
      404,
      'released already',
    );
    assert.equal(
      (await admin.call('POST', '/audit-legal-holds/alh_00000000000000000000000000/release')).status,
      404,
    );

    const newEvents = await rows(h, 'select event_type, data from outbox where realm_id = $1 order by id', [
      realm.id,
    ]);
    const added = newEvents.slice(eventsBefore);
    assert.deepEqual(
      added.map((e) => e.event_type),
      ['security.alert'],
    );
    assert.equal((added[0]?.data as Body)?.event_type, 'audit.legal_hold.released');
    assert.equal((await audits(h, realm, 'audit.legal_hold.placed')).length, 2);

    const list: Body = await (await admin.call('GET', '/audit-legal-holds')).json();
    assert.deepEqual(
      list.items.map((x: Body) => x.id),
      [h2.id, h1.id],
      'active first',
    );
  });

  test('case=validation and permission', async (t) => {
    const { h, realm, admin } = await setup(t);
    const short = await admin.call('POST', '/audit-legal-holds', { reason: 'no' });
    assert.equal(short.status, 422);
    const unknown = await admin.call('POST', '/audit-legal-holds', { reason: 'valid reason', colour: 'red' });
    assert.equal(unknown.status, 400);
    const exporter = await apiCaller(h, realm, {
      roles: [await roleWith(h, realm, 'exporter', ['realm.audit.export'])],
    });
    assert.equal((await exporter.call('POST', '/audit-legal-holds', { reason: 'litigation' })).status, 403);
    assert.equal((await exporter.call('GET', '/audit-legal-holds')).status, 403);
  });
});

describe('audit API › corrections', () => {
  test('case=a correction is a new event naming the original, which stays as it was', async (t) => {
    const { h, realm, admin } = await setup(t);
    const u = await h.createUser(realm, { email: 'c@example.com' });
    await admin.call('POST', `/users/${u.id}/suspend`, { reason: 'fraud review' });
    const [original] = await audits(h, realm, 'user.suspended');
    assert.ok(original);
    const before = JSON.stringify(original);
    const res = await admin.call('POST', `/audit-events/${original.id}/corrections`, {
      reason: 'wrong ticket number',
      correction: { ticket: 'T-2' },
    });
    assert.equal(res.status, 201);
    const body: Body = await res.json();
    assert.equal(body.corrects_event_id, original.id);
    assert.match(body.event_id, /^aud_/);
    const [after] = await rows(h, 'select * from audit_events where id = $1', [original.id]);
    assert.equal(JSON.stringify(after), before, 'the corrected event is never edited');
    const [correction] = await audits(h, realm, 'audit.event.corrected');
    assert.equal(correction?.corrects_event_id, original.id);
    assert.equal(correction?.reason, 'wrong ticket number');
    assert.deepEqual(correction?.data, { correction: { ticket: 'T-2' } });
    assert.equal(correction?.category, original.category);

    assert.equal(
      (await admin.call('POST', `/audit-events/${original.id}/corrections`, { reason: 'x' })).status,
      422,
      'reason of 5..1000',
    );
    const big = { reason: 'too big', correction: { blob: 'x'.repeat(9000) } };
    assert.equal((await admin.call('POST', `/audit-events/${original.id}/corrections`, big)).status, 422);

    // Another realm's event is unknown there.
    const other = await h.createRealm();
    const otherAdmin = await apiCaller(h, other);
    const cross = await otherAdmin.call('POST', `/audit-events/${original.id}/corrections`, {
      reason: 'not mine',
    });
    assert.equal(cross.status, 404);

    const holder = await apiCaller(h, realm, {
      roles: [await roleWith(h, realm, 'holder', ['realm.audit.legal_hold', 'realm.audit.export'])],
    });
    assert.equal(
      (await holder.call('POST', `/audit-events/${original.id}/corrections`, { reason: 'no permission' }))
        .status,
      403,
    );
  });
});

describe('audit API › activity events', () => {
  test('case=application activity is recorded under the caller with its correlation id', async (t) => {
    const { h, realm, admin } = await setup(t);
    const res = await admin.call(
      'POST',
      '/activity-events',
      { activity: 'invoice.approved', subject_id: 'usr_1', outcome: 'failure', data: { amount: 3 } },
      { 'x-request-id': 'req-activity-1' },
    );
    assert.equal(res.status, 201);
    const [a] = await audits(h, realm, 'activity.reported');
    assert.equal(a?.actor_id, admin.userId);
    assert.equal(a?.outcome, 'failure');
    assert.equal(a?.subject_id, 'usr_1');
    assert.equal(a?.correlation_id, 'req-activity-1');
    assert.deepEqual(a?.data, { activity: 'invoice.approved', details: { amount: 3 } });
    assert.equal((await admin.call('POST', '/activity-events', { activity: 'Bad Name!' })).status, 422);
    assert.equal((await events(h, realm, 'activity.reported')).length, 0, 'no outbox event');
    // An account-audience token is not an administration caller.
    const account = await apiCaller(h, realm, { audience: 'account' });
    const refused = await account.call('POST', '/activity-events', { activity: 'invoice.approved' });
    assert.ok(refused.status === 401 || refused.status === 403, String(refused.status));
    assert.equal((await audits(h, realm, 'activity.reported')).length, 1);
  });
});
