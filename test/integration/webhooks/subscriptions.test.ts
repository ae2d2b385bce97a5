// The webhook subscription API (spec doc 2, Webhook subscription; Webhooks endpoints; Delivery
// semantics 3; Versioning 2; Errors 409, 412, 422).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import { cleanupDeliveries } from '../../../src/webhooks/index.ts';
import { deliver, deliveriesOf, dispatch, emit, type Json, json, setup, subscribe } from './webhook-kit.ts';

const fieldsOf = (body: Json) =>
  (body.errors as { field: string; code: string }[]).map((e) => `${e.field}:${e.code}`);

describe('webhooks › subscriptions', () => {
  test('case=create answers the secret once; reads never show it; it is stored sealed', async (t) => {
    const s = await setup(t);
    const res = await s.admin.call('POST', '/webhooks', {
      name: 'Orders',
      destination_url: s.receiver.url(),
      event_types: ['user.created', 'user.deleted'],
      allow_private_network: true,
    });
    assert.equal(res.status, 201);
    assert.equal(res.headers.get('etag'), '"1"');
    const body = await json(res);
    assert.equal(res.headers.get('location'), `/api/v1/realms/${s.realm.name}/webhooks/${body.id}`);
    assert.match(String(body.id), /^whk_[0-9a-z]{26}$/);
    assert.match(String(body.signing_secret), /^whsec_[A-Za-z0-9+/]{43}=$/);
    const { id: _id, signing_secret: _s, created_at, updated_at, ...rest } = body;
    assert.ok(created_at && updated_at);
    assert.deepEqual(rest, {
      name: 'Orders',
      destination_url: s.receiver.url(),
      event_types: ['user.created', 'user.deleted'],
      organization_id: null,
      payload_form: 'minimal',
      event_version: 1,
      allow_private_network: true,
      state: 'active',
      owner_user_id: s.admin.userId,
    });

    const got = await json(await s.admin.call('GET', `/webhooks/${body.id}`));
    assert.equal('signing_secret' in got, false);
    const list = await json(await s.admin.call('GET', '/webhooks'));
    assert.equal((list.items as Json[]).length, 1);
    assert.equal('signing_secret' in (list.items as Json[])[0]!, false);

    const [row] = (
      await s.h.ctx.db.query<{ secret_sealed: string }>(
        'select secret_sealed from webhook_subscriptions where id = $1',
        [body.id],
      )
    ).rows;
    assert.match(row!.secret_sealed, /^pa1\./);
    assert.equal(row!.secret_sealed.includes(String(body.signing_secret).slice(6, 20)), false);
    const audit = await s.h.ctx.db.query(
      'select 1 from audit_events where realm_id = $1 and type = $2 and target_id = $3',
      [s.realm.id, 'webhook.created', body.id],
    );
    assert.equal(audit.rows.length, 1);
  });

  test('case=validation: catalog names, event_version, payload form, members', async (t) => {
    const s = await setup(t);
    const base = { name: 'x', destination_url: s.receiver.url(), allow_private_network: true };
    const cases: [Json, number, string[]][] = [
      [{ ...base, event_types: ['user.nope'] }, 422, ['event_types:unknown_event_type']],
      [{ ...base, event_types: ['*', 'user.created'] }, 422, ['event_types:unknown_event_type']],
      [{ ...base, event_types: [] }, 422, ['event_types:too_few']],
      [{ ...base, event_types: ['*'], event_version: 3 }, 422, ['event_version:unsupported_event_version']],
      [{ ...base, event_types: ['*'], event_version: 0 }, 422, ['event_version:unsupported_event_version']],
      [{ ...base, event_types: ['*'], payload_form: 'full' }, 422, ['payload_form:not_allowed']],
      [{ ...base, event_types: ['*'], plugin_id: 'p' }, 400, ['plugin_id:unknown_member']],
      [
        { ...base, event_types: ['*'], organization_id: 'org_00000000000000000000000000' },
        422,
        ['organization_id:not_found'],
      ],
    ];
    for (const [body, status, fields] of cases) {
      const res = await s.admin.call('POST', '/webhooks', body);
      const problem = await json(res);
      assert.equal(res.status, status, JSON.stringify(body));
      assert.deepEqual(fieldsOf(problem), fields, JSON.stringify(problem));
    }
    const ok = await subscribe(s, { event_types: ['*'], event_version: 2, payload_form: 'standard' });
    assert.equal(ok.event_version, 2);
    assert.equal(ok.payload_form, 'standard');
  });

  test('case=destination rules: egress guard at creation, 422 on destination_url', async (t) => {
    const s = await setup(t);
    const cases: [Json, string][] = [
      [{ destination_url: s.receiver.url() }, 'destination_url:egress_denied'],
      [
        { destination_url: 'http://nat64.test/hook', allow_private_network: true },
        'destination_url:egress_denied',
      ],
      [
        { destination_url: 'http://private.test/hook', allow_private_network: true },
        'destination_url:egress_denied',
      ],
      [{ destination_url: 'http://169.254.169.254/latest' }, 'destination_url:egress_denied'],
      [{ destination_url: 'http://[::ffff:7f00:1]/hook' }, 'destination_url:egress_denied'],
      [{ destination_url: 'http://127.1/hook' }, 'destination_url:invalid_url'],
      [{ destination_url: 'https://nowhere.test/hook' }, 'destination_url:unresolvable'],
      [{ destination_url: 'ftp://public.test/hook' }, 'destination_url:invalid_url'],
    ];
    for (const [extra, field] of cases) {
      const res = await s.admin.call('POST', '/webhooks', {
        name: 'x',
        event_types: ['*'],
        allow_private_network: false,
        ...extra,
      });
      const body = await json(res);
      assert.equal(res.status, 422, JSON.stringify(extra));
      assert.equal(body.code, 'validation_failed');
      assert.deepEqual(fieldsOf(body), [field], JSON.stringify(extra));
    }
    const pub = await subscribe(s, {
      destination_url: 'https://public.test/hook',
      allow_private_network: false,
    });
    assert.equal(pub.allow_private_network, false);
  });

  test('case=allow_private_network is refused without operator permission', async (t) => {
    const s = await setup(t, { 'delivery.egress_allowlist': [] });
    const res = await s.admin.call('POST', '/webhooks', {
      name: 'x',
      event_types: ['*'],
      destination_url: 'https://public.test/hook',
      allow_private_network: true,
    });
    assert.equal(res.status, 422);
    assert.deepEqual(fieldsOf(await json(res)), ['allow_private_network:not_allowed']);
  });

  test('case=PATCH is partial; organization_id is immutable; If-Match; state-only changes skip resolution', async (t) => {
    const s = await setup(t);
    const sub = await subscribe(s, { event_types: ['user.created'] });
    const path = `/webhooks/${sub.id}`;

    const org = await s.admin.call('PATCH', path, { organization_id: 'org_00000000000000000000000000' });
    assert.equal(org.status, 400);
    assert.equal((await json(org)).code, 'invalid_request');

    const renamed = await s.admin.call('PATCH', path, { name: 'renamed' }, { 'if-match': '"1"' });
    assert.equal(renamed.status, 200);
    assert.equal(renamed.headers.get('etag'), '"2"');
    const r = await json(renamed);
    assert.equal(r.name, 'renamed');
    assert.deepEqual(r.event_types, ['user.created']);

    const stale = await s.admin.call('PATCH', path, { name: 'again' }, { 'if-match': '"1"' });
    assert.equal(stale.status, 412);
    assert.equal((await json(stale)).code, 'precondition_failed');

    const badVersion = await s.admin.call('PATCH', path, { event_version: 7 });
    assert.equal(badVersion.status, 422);

    // The receiver's name now resolves to a private address outside the allowlist.
    s.table['receiver.test'] = ['10.9.9.9'];
    const paused = await s.admin.call('PATCH', path, { state: 'paused' });
    assert.equal(paused.status, 200, 'a state-only change does not resolve the destination');
    const named = await s.admin.call('PATCH', path, { name: 'third' });
    assert.equal(named.status, 422, 'any other change re-validates the whole subscription');
    assert.deepEqual(fieldsOf(await json(named)), ['destination_url:egress_denied']);
  });

  test('case=a concurrent update that commits second fails 412', async (t) => {
    const s = await setup(t);
    const sub = await subscribe(s);
    const path = `/webhooks/${sub.id}`;
    let release = () => {};
    let started = () => {};
    const waiting = new Promise<void>((ok) => {
      started = ok;
    });
    s.hold.until = new Promise<void>((ok) => {
      release = ok;
    });
    s.hold.waiting = () => started();
    // A: re-validates, and waits on the slow resolution meanwhile.
    const a = s.admin.call('PATCH', path, { name: 'from A' });
    await waiting;
    s.hold.until = null;
    // B: a state change, which resolves nothing, commits first.
    const b = await s.admin.call('PATCH', path, { state: 'paused' });
    assert.equal(b.status, 200);
    release();
    const ra = await a;
    assert.equal(ra.status, 412);
    const now = await json(await s.admin.call('GET', path));
    assert.equal(now.name, 'test receiver');
    assert.equal(now.state, 'paused');
  });

  test('case=plugin-managed subscriptions answer 409 to changes', async (t) => {
    const s = await setup(t);
    const sub = await subscribe(s);
    await s.h.ctx.db.query("update webhook_subscriptions set plugin_id = 'plg_x' where id = $1", [sub.id]);
    const path = `/webhooks/${sub.id}`;
    assert.equal((await s.admin.call('PATCH', path, { name: 'n' })).status, 409);
    assert.equal((await s.admin.call('POST', `${path}/rotate-secret`)).status, 409);
    assert.equal((await s.admin.call('DELETE', path)).status, 409);
    const got = await json(await s.admin.call('GET', path));
    assert.equal(got.plugin_id, 'plg_x');
  });

  test('case=DELETE hides the subscription and keeps its deliveries as history until privacy.history_retention', async (t) => {
    const s = await setup(t, { 'privacy.history_retention': '30d' });
    const sub = await subscribe(s);
    const path = `/webhooks/${sub.id}`;
    const sent = await emit(s, 'user.created', { user_id: 'usr_1', created_via: 'admin' });
    await dispatch(s);
    await deliver(s);
    s.receiver.answer = (_req, res) => {
      res.statusCode = 500;
      res.end();
    };
    const queued = await emit(s, 'user.created', { user_id: 'usr_2', created_via: 'admin' });
    await dispatch(s);
    assert.equal((await s.admin.call('DELETE', path, undefined, { 'if-match': '"9"' })).status, 412);

    assert.equal((await s.admin.call('DELETE', path)).status, 204);
    assert.equal((await s.admin.call('GET', path)).status, 404);
    assert.equal((await s.admin.call('PATCH', path, { state: 'active' })).status, 404);
    assert.equal((await s.admin.call('POST', `${path}/rotate-secret`)).status, 404);
    assert.equal((await s.admin.call('DELETE', path)).status, 404);
    const listed = await json(await s.admin.call('GET', '/webhooks'));
    assert.deepEqual(listed.items, [], 'a deleted subscription is not listed');
    const [row] = (
      await s.h.ctx.db.query('select secret_sealed, deleted_at from webhook_subscriptions where id = $1', [
        sub.id,
      ])
    ).rows as Json[];
    assert.equal(row?.secret_sealed, null, 'its secret is erased at once');

    // The history stays readable; what was still queued ended unattempted, and nothing is sent.
    const history = await json(await s.admin.call('GET', `${path}/deliveries`));
    const states = Object.fromEntries((history.items as Json[]).map((d) => [d.event_id, d.state]));
    assert.deepEqual(states, { [sent]: 'delivered', [queued]: 'dead_letter' });
    const backlog = await json(await s.admin.call('GET', `${path}/backlog`));
    assert.equal(backlog.delivered, 1);
    assert.equal(backlog.dead_letter, 1);
    const dead = (history.items as Json[]).find((d) => d.event_id === queued)!;
    const replay = await s.admin.call('POST', `${path}/deliveries/${dead.id}/replay`);
    assert.equal(replay.status, 409, 'a deleted subscription is not delivered to');
    await emit(s, 'user.created', { user_id: 'usr_3', created_via: 'admin' });
    await dispatch(s);
    await deliver(s);
    assert.equal(s.receiver.received.length, 1, 'only the delivery made before the deletion');
    assert.equal((await deliveriesOf(s, String(sub.id))).length, 2, 'no new event is queued for it');

    // webhooks.cleanup: kept until privacy.history_retention after creation, then gone with the row.
    const cleanup = () => cleanupDeliveries(workerDeps(s.h.ctx), s.h.clock.now());
    s.h.clock.advance(29 * 86_400_000);
    await cleanup();
    assert.equal((await deliveriesOf(s, String(sub.id))).length, 2);
    s.h.clock.advance(2 * 86_400_000);
    await cleanup();
    assert.equal((await deliveriesOf(s, String(sub.id))).length, 0);
    assert.equal(
      (await s.h.ctx.db.query('select 1 from webhook_subscriptions where id = $1', [sub.id])).rows.length,
      0,
    );
  });

  test('case=deliveries newest first with a cursor; replay a dead letter with the same event id; backlog', async (t) => {
    const s = await setup(t);
    const sub = await subscribe(s);
    s.receiver.answer = (_req, res) => {
      res.statusCode = 410;
      res.end();
    };
    const events: string[] = [];
    for (let i = 0; i < 3; i++) {
      events.push(await emit(s, 'user.created', { user_id: `usr_${i}`, created_via: 'admin' }));
      await dispatch(s);
      s.h.clock.advance(5);
    }
    await deliver(s);
    const path = `/webhooks/${sub.id}`;
    const page1 = await json(await s.admin.call('GET', `${path}/deliveries?limit=2`));
    const items1 = page1.items as Json[];
    assert.equal(items1.length, 2);
    assert.equal(typeof page1.next_cursor, 'string');
    const page2 = await json(
      await s.admin.call('GET', `${path}/deliveries?limit=2&cursor=${page1.next_cursor}`),
    );
    const items2 = page2.items as Json[];
    assert.equal(items2.length, 1);
    assert.equal(page2.next_cursor, null);
    assert.deepEqual(
      [...items1, ...items2].map((d) => d.event_id),
      [...events].reverse(),
    );
    const first = items2[0]!;
    assert.equal(first.state, 'dead_letter');
    assert.equal(first.attempts, 1);
    assert.equal(first.last_status, 410);
    assert.equal(first.response_category, 'gone');

    let backlog = await json(await s.admin.call('GET', `${path}/backlog`));
    assert.deepEqual(
      { ...backlog, last_delivered_at: null },
      {
        pending: 0,
        retrying: 0,
        dead_letter: 3,
        delivered: 0,
        oldest_due_seconds: 0,
        last_delivered_at: null,
        last_failure_category: 'gone',
      },
    );

    const replay = await s.admin.call('POST', `${path}/deliveries/${first.id}/replay`);
    assert.equal(replay.status, 202);
    const replayed = await json(replay);
    assert.equal(replayed.state, 'pending');
    assert.equal(replayed.event_id, events[0]);
    assert.equal((await s.admin.call('POST', `${path}/deliveries/${first.id}/replay`)).status, 409);
    assert.equal(
      (await s.admin.call('POST', `${path}/deliveries/whd_00000000000000000000000000/replay`)).status,
      404,
    );

    s.receiver.answer = (_req, res) => {
      res.statusCode = 200;
      res.end();
    };
    const before = s.receiver.received.length;
    await deliver(s);
    assert.equal(s.receiver.received.length, before + 1);
    assert.equal(s.receiver.received.at(-1)?.headers['webhook-id'], events[0]);
    backlog = await json(await s.admin.call('GET', `${path}/backlog`));
    assert.equal(backlog.delivered, 1);
    assert.equal(backlog.dead_letter, 2);
    assert.equal(typeof backlog.last_delivered_at, 'string');
  });

  test('case=extension contracts list both event versions, none deprecated', async (t) => {
    const s = await setup(t);
    const res = await s.admin.call('GET', '/extension-contracts');
    assert.equal(res.status, 200);
    const body = await json(res);
    const versions = body.webhook_event_versions as Json[];
    assert.deepEqual(
      versions.map((v) => [v.version, v.default, v.deprecated]),
      [
        [1, true, false],
        [2, false, false],
      ],
    );
  });

  test('case=a caller without the webhook permissions is refused', async (t) => {
    const s = await setup(t);
    const { apiCaller } = await import('../../harness/api-kit.ts');
    const nobody = await apiCaller(s.h, s.realm, { roles: [] });
    const res = await nobody.call('GET', '/webhooks');
    assert.equal(res.status, 403);
  });
});
