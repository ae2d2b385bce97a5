// Webhook delivery end to end: committed events fan out to subscriptions and reach a real HTTP
// receiver on loopback, signed so the standardwebhooks library accepts them (spec doc 2, Events;
// Delivery semantics; Authentication 4-5).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { TASKS } from '../../../src/main/worker/tasks.ts';
import { startWorker } from '../../../src/main/worker/worker.ts';
import { claimDueDeliveries } from '../../../src/webhooks/deliveries.repo.ts';
import { secretAad } from '../../../src/webhooks/subscriptions.service.ts';
import { signOne } from '../../../src/webhooks/webhook-signature.ts';
import { RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';
import {
  deliver,
  deliveriesOf,
  dispatch,
  emit,
  type Json,
  json,
  type Received,
  setup,
  subscribe,
} from './webhook-kit.ts';

const verify = (secret: string, r: Received): Json =>
  new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Json;

const userCreated = (n: number) => ({ user_id: `usr_${n}`, created_via: 'admin' });

describe('webhooks › delivery', () => {
  test('case=an event reaches the receiver once, signed, with the spec headers and envelope', async (t) => {
    const s = await setup(t);
    const sub = await subscribe(s);
    const eventId = await emit(s, 'user.created', userCreated(1), { correlationId: 'req-1' });
    assert.deepEqual(await dispatch(s), { dispatched: 1 });
    await deliver(s);

    assert.equal(s.receiver.received.length, 1);
    const got = s.receiver.received[0]!;
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['user-agent'], 'ProudAuth-Webhooks/1');
    assert.equal(got.headers['webhook-id'], eventId);
    assert.match(String(got.headers['webhook-timestamp']), /^[0-9]{10}$/);
    assert.match(String(got.headers['webhook-signature']), /^v1,[A-Za-z0-9+/]+=*$/);
    assert.deepEqual(verify(String(sub.signing_secret), got), {
      event_id: eventId,
      event_type: 'user.created',
      event_version: 1,
      occurred_at: JSON.parse(got.body).occurred_at,
      realm_id: s.realm.id,
      correlation_id: 'req-1',
      data: { user_id: 'usr_1' },
    });
    const [d] = await deliveriesOf(s, String(sub.id));
    assert.equal(d?.state, 'delivered');
    assert.equal(d?.attempts, 1);
    assert.equal(d?.last_status, 204);
    assert.deepEqual(s.outcomes, ['delivered']);

    // Nothing more is due: another run sends nothing.
    await deliver(s);
    assert.equal(s.receiver.received.length, 1);
  });

  test('case=fan-out: type or *, realm-wide or the matching organization; paused and other realms get nothing', async (t) => {
    const s = await setup(t);
    const orgA = 'org_0000000000000000000000000a';
    const orgB = 'org_0000000000000000000000000b';
    // Organization-scoped subscriptions need a live organization: insert them as rows.
    for (const org of [orgA, orgB])
      await s.h.ctx.db.query(
        `insert into organizations (realm_id, id, slug, display_name, state, created_at, updated_at)
         values ($1, $2, $2, $2, 'active', now(), now())`,
        [s.realm.id, org],
      );
    const all = await subscribe(s, { event_types: ['*'], destination_url: s.receiver.url('/all') });
    const typed = await subscribe(s, {
      event_types: ['organization.membership.added'],
      destination_url: s.receiver.url('/typed'),
    });
    const scopedA = await subscribe(s, {
      event_types: ['*'],
      organization_id: orgA,
      destination_url: s.receiver.url('/org-a'),
      payload_form: 'standard',
      event_version: 2,
    });
    const paused = await subscribe(s, {
      event_types: ['*'],
      destination_url: s.receiver.url('/paused'),
      state: 'paused',
    });
    const other = await s.h.createRealm();

    const inA = await emit(
      s,
      'organization.membership.added',
      { user_id: 'usr_a', membership_id: 'mem_a', source: 'invitation' },
      { orgId: orgA },
    );
    const inB = await emit(
      s,
      'organization.membership.added',
      { user_id: 'usr_b', membership_id: 'mem_b', source: 'admin' },
      { orgId: orgB },
    );
    const realmWide = await emit(s, 'user.locked', { user_id: 'usr_c', state: 'locked' });
    await emit(s, 'user.locked', { user_id: 'usr_d', state: 'locked' }, { realmId: other.id });
    await dispatch(s);

    const eventsOf = async (sub: Json) =>
      (await deliveriesOf(s, String(sub.id))).map((d) => d.event_id).sort();
    assert.deepEqual(await eventsOf(all), [inA, inB, realmWide].sort());
    assert.deepEqual(await eventsOf(typed), [inA, inB].sort());
    assert.deepEqual(await eventsOf(scopedA), [inA]);
    assert.deepEqual(await eventsOf(paused), []);

    // Version 2, standard form: organization_id and payload_form; the source member kept.
    const [v2] = await deliveriesOf(s, String(scopedA.id));
    const body = JSON.parse(v2!.body) as Json;
    assert.equal(body.organization_id, orgA);
    assert.equal('org_id' in body, false);
    assert.equal(body.payload_form, 'standard');
    assert.equal(body.event_version, 2);
    assert.deepEqual(body.data, { user_id: 'usr_a', membership_id: 'mem_a', source: 'invitation' });
    // Version 1, minimal form: org_id, and source dropped.
    const v1 = (await deliveriesOf(s, String(all.id))).find((d) => d.event_id === inA);
    const body1 = JSON.parse(v1!.body) as Json;
    assert.equal(body1.org_id, orgA);
    assert.deepEqual(body1.data, { user_id: 'usr_a', membership_id: 'mem_a' });

    await deliver(s);
    const paths = s.receiver.received.map((r) => r.url).sort();
    assert.deepEqual(paths, ['/all', '/all', '/all', '/org-a', '/typed', '/typed']);
  });

  test('case=failures retry with backoff; 3xx is a failure and never followed; the last attempt dead-letters', async (t) => {
    const s = await setup(t, { 'delivery.webhook_max_attempts': 3 });
    const sub = await subscribe(s);
    let redirectsFollowed = 0;
    s.receiver.answer = (req, res) => {
      if (req.url === '/elsewhere') redirectsFollowed++;
      res.statusCode = 302;
      res.setHeader('location', `http://127.0.0.1:${s.receiver.port}/elsewhere`);
      res.end();
    };
    await emit(s, 'user.created', userCreated(2));
    await dispatch(s);
    await deliver(s);
    let [d] = await deliveriesOf(s, String(sub.id));
    assert.equal(d?.state, 'retrying');
    assert.equal(d?.attempts, 1);
    assert.equal(d?.last_status, 302);
    assert.equal(d?.last_category, 'redirect');
    const wait = d!.next_attempt_at.getTime() - s.h.clock.now().getTime();
    assert.ok(wait > 5_000 && wait <= 12_500, `first retry after ${wait} ms`);

    // Not due yet: nothing is sent.
    await deliver(s);
    assert.equal(s.receiver.received.length, 1);

    s.receiver.answer = (_req, res) => {
      res.statusCode = 503;
      res.end();
    };
    s.h.clock.advance(13_000);
    await deliver(s);
    [d] = await deliveriesOf(s, String(sub.id));
    assert.equal(d?.state, 'retrying');
    assert.equal(d?.attempts, 2);
    assert.equal(d?.last_category, 'server_error');

    s.h.clock.advance(30_000);
    await deliver(s);
    [d] = await deliveriesOf(s, String(sub.id));
    assert.equal(d?.state, 'dead_letter');
    assert.equal(d?.attempts, 3);
    assert.equal(redirectsFollowed, 0);
    assert.equal(new Set(s.receiver.received.map((r) => r.headers['webhook-id'])).size, 1);
    assert.deepEqual(s.outcomes, ['retrying', 'retrying', 'dead_letter']);
  });

  test('case=410 dead-letters at once and the subscription stays active', async (t) => {
    const s = await setup(t);
    const sub = await subscribe(s);
    s.receiver.answer = (_req, res) => {
      res.statusCode = 410;
      res.end();
    };
    await emit(s, 'user.created', userCreated(3));
    await dispatch(s);
    await deliver(s);
    const [d] = await deliveriesOf(s, String(sub.id));
    assert.equal(d?.state, 'dead_letter');
    assert.equal(d?.attempts, 1);
    assert.equal(d?.last_category, 'gone');
    const got = await json(await s.admin.call('GET', `/webhooks/${sub.id}`));
    assert.equal(got.state, 'active');
  });

  test('case=a receiver slower than delivery.webhook_timeout is a timeout; a huge answer is cut at 64 KiB', async (t) => {
    const s = await setup(t, { 'delivery.webhook_timeout': '1s' });
    const sub = await subscribe(s);
    s.receiver.answer = (_req, res) => {
      setTimeout(() => {
        res.statusCode = 200;
        res.end();
      }, 2500).unref();
    };
    await emit(s, 'user.created', userCreated(4));
    await dispatch(s);
    await deliver(s);
    let [d] = await deliveriesOf(s, String(sub.id));
    assert.equal(d?.state, 'retrying');
    assert.equal(d?.last_category, 'timeout');

    let sent = 0;
    s.receiver.answer = (_req, res) => {
      res.statusCode = 200;
      const chunk = Buffer.alloc(64 * 1024, 97);
      const pump = () => {
        while (sent < 8 * 1024 * 1024) {
          sent += chunk.length;
          if (!res.write(chunk)) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('error', () => undefined);
      pump();
    };
    s.h.clock.advance(13_000);
    await deliver(s);
    [d] = await deliveriesOf(s, String(sub.id));
    assert.equal(d?.state, 'delivered');
    assert.ok(sent < 8 * 1024 * 1024, 'the rest of the answer was never read');
  });

  test('case=a worker killed mid-delivery: the lease lapses and another worker delivers the same event id', async (t) => {
    const s = await setup(t);
    const sub = await subscribe(s);
    const eventId = await emit(s, 'user.created', userCreated(5));
    await dispatch(s);
    // Worker "dead" claims the delivery and never ends it (the process died before the POST ended).
    const now = s.h.clock.now();
    const claimed = await s.h.ctx.db.tx((tx) =>
      claimDueDeliveries(tx, 'worker-dead', now, new Date(now.getTime() + 40_000), 10),
    );
    assert.equal(claimed.length, 1);
    // While its lease runs, nobody else takes it.
    await deliver(s, 'worker-b');
    assert.equal(s.receiver.received.length, 0);
    s.h.clock.advance(41_000);
    await deliver(s, 'worker-b');
    assert.equal(s.receiver.received.length, 1);
    const got = s.receiver.received[0]!;
    assert.equal(got.headers['webhook-id'], eventId);
    assert.equal((verify(String(sub.signing_secret), got) as Json).event_id, eventId);
    const [d] = await deliveriesOf(s, String(sub.id));
    assert.equal(d?.state, 'delivered');
    assert.equal(d?.attempts, 2);
  });

  test('case=two workers racing never make one attempt twice', { skip: RACE_NEEDS_POSTGRES }, async (t) => {
    const s = await setup(t);
    const sub = await subscribe(s);
    s.receiver.answer = (_req, res) => {
      setTimeout(() => {
        res.statusCode = 200;
        res.end();
      }, 20).unref();
    };
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push(await emit(s, 'user.created', userCreated(100 + i)));
    await dispatch(s);
    for (let round = 0; round < 3; round++)
      await Promise.all([deliver(s, 'worker-a'), deliver(s, 'worker-b'), deliver(s, 'worker-c')]);
    const seen = s.receiver.received.map((r) => String(r.headers['webhook-id']));
    assert.deepEqual([...seen].sort(), [...ids].sort());
    const rows = await deliveriesOf(s, String(sub.id));
    assert.ok(rows.every((d) => d.state === 'delivered' && d.attempts === 1));
  });

  test('case=a destination that later resolves to a private address fails with egress_denied', async (t) => {
    const s = await setup(t);
    const sub = await subscribe(s, {
      destination_url: 'http://public.test/hook',
      allow_private_network: false,
    });
    s.table['public.test'] = ['127.0.0.1'];
    await emit(s, 'user.created', userCreated(6));
    await dispatch(s);
    await deliver(s);
    const [d] = await deliveriesOf(s, String(sub.id));
    assert.equal(d?.state, 'retrying');
    assert.equal(d?.last_category, 'egress_denied');
    assert.equal(s.receiver.received.length, 0);
    const backlog = await json(await s.admin.call('GET', `/webhooks/${sub.id}/backlog`));
    assert.equal(backlog.last_failure_category, 'egress_denied');
  });

  test('case=residency: hosts outside privacy.residency.allowed_destinations are refused at registration and before each attempt', async (t) => {
    const s = await setup(t, { 'privacy.residency.allowed_destinations': 'receiver.test' });
    const refused = await s.admin.call('POST', '/webhooks', {
      name: 'elsewhere',
      destination_url: 'https://hooks.elsewhere.test/in',
      event_types: ['user.created'],
    });
    assert.equal(refused.status, 422);
    const problem = await json(refused);
    assert.deepEqual(
      (problem.errors as Json[]).map((e) => [e.field, e.code]),
      [['destination_url', 'egress_denied']],
    );

    const sub = await subscribe(s);
    await emit(s, 'user.created', userCreated(9));
    await dispatch(s);
    // The operator narrows the list after registration: the next attempt is refused unsent.
    s.deps.policy = { ...s.deps.policy, allowedDestinations: ['*.eu.example.com'] };
    await deliver(s);
    const [d] = await deliveriesOf(s, String(sub.id));
    assert.equal(d?.last_category, 'egress_denied');
    assert.equal(s.receiver.received.length, 0);
  });

  test('case=after rotate-secret, deliveries carry both signatures for 24 hours, then only the new one', async (t) => {
    const s = await setup(t);
    const sub = await subscribe(s);
    const rotated = await json(await s.admin.call('POST', `/webhooks/${sub.id}/rotate-secret`));
    const newSecret = String(rotated.signing_secret);
    assert.notEqual(newSecret, sub.signing_secret);
    await emit(s, 'user.created', userCreated(7));
    await dispatch(s);
    await deliver(s);
    const got = s.receiver.received[0]!;
    assert.equal(String(got.headers['webhook-signature']).split(' ').length, 2);
    verify(newSecret, got);
    verify(String(sub.signing_secret), got);

    s.h.clock.advance(24 * 3600 * 1000 + 1000);
    await emit(s, 'user.created', userCreated(8));
    await dispatch(s);
    await deliver(s);
    const later = s.receiver.received[1]!;
    const sigs = String(later.headers['webhook-signature']).split(' ');
    // The harness clock runs ahead of the verifier's, so the signature is checked by hand here.
    const ts = Number(later.headers['webhook-timestamp']);
    assert.deepEqual(sigs, [signOne(newSecret, String(later.headers['webhook-id']), ts, later.body)]);
  });

  test('case=a secret issued unpadded still signs what standardwebhooks accepts', async (t) => {
    const s = await setup(t);
    const sub = await subscribe(s);
    let unpadded = String(sub.signing_secret);
    assert.ok(unpadded.endsWith('='));
    unpadded = unpadded.replace(/=+$/, '');
    const keyring = s.h.ctx.keyring!;
    await s.h.ctx.db.query(
      'update webhook_subscriptions set secret_sealed = $3 where realm_id = $1 and id = $2',
      [
        s.realm.id,
        sub.id,
        keyring.encrypt('webhook-secret', unpadded, secretAad(s.realm.id, String(sub.id))),
      ],
    );
    await emit(s, 'user.created', userCreated(9));
    await dispatch(s);
    await deliver(s);
    verify(unpadded, s.receiver.received[0]!);
    verify(String(sub.signing_secret), s.receiver.received[0]!);
  });

  test('case=a paused subscription queues nothing; a queued delivery waits while paused', async (t) => {
    const s = await setup(t);
    const sub = await subscribe(s);
    await emit(s, 'user.created', userCreated(10));
    await dispatch(s);
    const paused = await s.admin.call('PATCH', `/webhooks/${sub.id}`, { state: 'paused' });
    assert.equal(paused.status, 200);
    await emit(s, 'user.created', userCreated(11));
    await dispatch(s);
    assert.equal((await deliveriesOf(s, String(sub.id))).length, 1);
    await deliver(s);
    assert.equal(s.receiver.received.length, 0);
    const [d] = await deliveriesOf(s, String(sub.id));
    assert.equal(d?.attempts, 0);
    assert.equal(d?.state, 'pending');
    await s.admin.call('PATCH', `/webhooks/${sub.id}`, { state: 'active' });
    s.h.clock.advance(61_000);
    await deliver(s);
    assert.equal(s.receiver.received.length, 1);
  });

  test('case=the worker runs dispatch and delivery as tasks and counts attempts; a late backlog degrades /status', async (t) => {
    const s = await setup(t);
    await subscribe(s);
    const worker = startWorker(s.h.ctx, { autostart: false });
    t.after(() => worker.stop());
    const task = (name: string) => {
      const found = TASKS.find((x) => x.name === name);
      if (!found) throw new Error(`no task ${name}`);
      return found;
    };
    await emit(s, 'user.created', userCreated(12));
    await worker.scheduler.runOnce(task('outbox.dispatch'));
    await worker.scheduler.runOnce(task('webhooks.deliver'));
    assert.equal(s.receiver.received.length, 1);
    const metrics = await (await s.h.internal('/metrics')).text();
    assert.match(metrics, /^service_delivery_total\{channel="webhook",outcome="delivered"\} 1$/m);

    // A delivery due for more than 300 seconds degrades the webhooks capability.
    s.receiver.answer = (_req, res) => {
      res.statusCode = 500;
      res.end();
    };
    await emit(s, 'user.created', userCreated(13));
    await worker.scheduler.runOnce(task('outbox.dispatch'));
    s.h.clock.advance(301_000);
    const status = (await (await s.h.internal('/status')).json()) as Json;
    assert.equal((status.capabilities as Json).webhooks, 'degraded');
    assert.ok(Number((status.backlog_oldest_seconds as Json).webhooks) >= 301);
    const gauge = await (await s.h.internal('/metrics')).text();
    const age = Number(/^service_webhook_oldest_due_seconds (\d+)$/m.exec(gauge)?.[1]);
    assert.ok(age >= 301, `gauge ${age}`);
  });

  test('case=deleting an organization disables its subscriptions; they never receive its organization.deleted', async (t) => {
    const s = await setup(t);
    const created = await s.admin.call('POST', '/organizations', {
      slug: 'acme-hooks',
      display_name: 'Acme',
    });
    assert.equal(created.status, 201);
    const org = await json(created);
    const scoped = await subscribe(s, {
      event_types: ['organization.deleted'],
      organization_id: org.id,
      destination_url: s.receiver.url('/scoped'),
    });
    const realmWide = await subscribe(s, {
      event_types: ['organization.deleted'],
      destination_url: s.receiver.url('/realm'),
    });
    await dispatch(s);
    assert.equal((await s.admin.call('DELETE', `/organizations/${org.id}`)).status, 202);
    await dispatch(s);
    assert.equal((await deliveriesOf(s, String(scoped.id))).length, 0);
    assert.equal((await deliveriesOf(s, String(realmWide.id))).length, 1);
    assert.equal((await json(await s.admin.call('GET', `/webhooks/${scoped.id}`))).state, 'disabled');
  });

  test('case=a secret that no longer opens fails the attempt, which then backs off like any failure', async (t) => {
    const s = await setup(t, { 'delivery.webhook_max_attempts': 2 });
    const sub = await subscribe(s);
    await s.h.ctx.db.query(
      "update webhook_subscriptions set secret_sealed = 'pa1.9.AAAA.AAAA' where id = $1",
      [sub.id],
    );
    await emit(s, 'user.created', userCreated(14));
    await dispatch(s);
    await deliver(s);
    let [d] = await deliveriesOf(s, String(sub.id));
    assert.equal(d?.state, 'retrying');
    assert.equal(d?.last_category, 'network_error');
    s.h.clock.advance(13_000);
    await deliver(s);
    [d] = await deliveriesOf(s, String(sub.id));
    assert.equal(d?.state, 'dead_letter');
    assert.equal(s.receiver.received.length, 0);
  });
});
