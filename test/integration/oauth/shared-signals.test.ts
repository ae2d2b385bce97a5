// Shared Signals transmitter end to end (OpenID SSF 1.0, push delivery of RFC 8417 security event
// tokens): a confidential client configures its stream, and a real receiver here verifies every
// SET it is pushed with jose against the realm's JWKS. Off by default; events for session
// revocation, credential change and account disablement are queued in the transaction of the
// change and delivered by the ssf.deliver task with retries, through the egress guard.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { TASKS } from '../../../src/main/worker/tasks.ts';
import { startWorker, workerDeps } from '../../../src/main/worker/worker.ts';
import {
  cleanupSharedSignals,
  deliverSharedSignalsTask,
  type SharedSignalsDeps,
} from '../../../src/oauth/shared-signals.task.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { movableClock, PASSWORD, rows, signinSetup } from '../../harness/signin-kit.ts';
import { basic, clientSecret, codeFlow } from '../../harness/token-kit.ts';
import { type Receiver, startReceiver } from '../webhooks/webhook-kit.ts';

type Row = Record<string, unknown>;
const CAEP = 'https://schemas.openid.net/secevent/caep/event-type/';
const RISC = 'https://schemas.openid.net/secevent/risc/event-type/';
const VERIFICATION = 'https://schemas.openid.net/secevent/ssf/event-type/verification';
const ALL = [`${CAEP}session-revoked`, `${CAEP}credential-change`, `${RISC}account-disabled`];

async function setup(t: TestContext, opts: { enabled?: boolean; allowlist?: string } = {}) {
  const receiver: Receiver = await startReceiver(t);
  receiver.answer = (_req, res) => {
    res.statusCode = 202;
    res.end();
  };
  const clock = movableClock();
  const s = await signinSetup(t, {
    clock,
    overrides: opts.allowlist === '' ? {} : { 'delivery.egress_allowlist': opts.allowlist ?? '127.0.0.1/32' },
  });
  const { h, realm, client } = s;
  if (!client) throw new Error('no client');
  if (opts.enabled !== false) await h.setPolicy(realm, { shared_signals: { enabled: true } });
  const creds = { clientId: 'web-app', secret: await clientSecret(h, realm, client) };
  const issuer = `${h.ctx.config.server.publicOrigin}/realms/${realm.name}`;
  const deps: SharedSignalsDeps = workerDeps(h.ctx);
  t.after(async () => {
    await h.ctx.db.query('delete from ssf_streams where realm_id = $1', [realm.id]);
  });
  const call = (method: string, path: string, body?: unknown, auth = basic(creds.clientId, creds.secret)) =>
    h.get(`/realms/${realm.name}${path}`, {
      method,
      headers: {
        authorization: auth,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const createStream = async (events = ALL) => {
    const res = await call('POST', '/ssf/streams', {
      delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: `http://127.0.0.1:${receiver.port}/ssf` },
      events_requested: events,
      description: 'test receiver',
    });
    const body = (await res.json()) as Row;
    assert.equal(res.status, 201, JSON.stringify(body));
    return body;
  };
  const deliver = () => deliverSharedSignalsTask('test-worker')(deps, clock.now());
  const events = (): Promise<Row[]> =>
    rows(h, 'select * from ssf_events where realm_id = $1 order by created_at, id', [realm.id]);
  const jwks = createRemoteJWKSet(new URL(`${h.publicUrl}/realms/${realm.name}/jwks`));
  /** What a receiver does with a pushed SET (RFC 8935 section 2; RFC 8417). */
  const verifySet = async (i: number) => {
    const got = receiver.received[i];
    assert.ok(got, `SET ${i} was pushed`);
    assert.equal(got.headers['content-type'], 'application/secevent+jwt');
    const { payload } = await jwtVerify(got.body, jwks, {
      issuer,
      audience: 'web-app',
      typ: 'secevent+jwt',
      requiredClaims: ['iat', 'jti', 'events'],
    });
    return payload as Row & { events: Record<string, Row>; sub_id: Row };
  };
  const signIn = () => codeFlow(h, realm, creds, { start: { scope: 'openid' } });
  return {
    ...s,
    h,
    realm,
    creds,
    receiver,
    clock,
    deps,
    issuer,
    call,
    createStream,
    deliver,
    events,
    verifySet,
    signIn,
  };
}

describe('oauth › shared signals', () => {
  test('case=off by default: no metadata, no stream endpoints, no events', async (t) => {
    const s = await setup(t, { enabled: false });
    assert.equal((await s.h.get(`/realms/${s.realm.name}/.well-known/ssf-configuration`)).status, 404);
    const res = await s.call('POST', '/ssf/streams', {
      delivery: { method: 'urn:ietf:rfc:8935', endpoint_url: 'https://rp.example.com/ssf' },
      events_requested: ALL,
    });
    assert.equal(res.status, 404);
    assert.equal((await rows(s.h, 'select 1 from ssf_streams where realm_id = $1', [s.realm.id])).length, 0);
  });

  test('case=metadata and the stream endpoints: create, read, update, status, delete', async (t) => {
    const s = await setup(t);
    const meta = (await (
      await s.h.get(`/realms/${s.realm.name}/.well-known/ssf-configuration`)
    ).json()) as Row;
    assert.equal(meta.issuer, s.issuer);
    assert.equal(meta.jwks_uri, `${s.issuer}/jwks`);
    assert.deepEqual(meta.delivery_methods_supported, ['urn:ietf:rfc:8935']);
    assert.equal(meta.configuration_endpoint, `${s.issuer}/ssf/streams`);

    // No credentials, wrong credentials: nothing is created.
    assert.equal((await s.call('GET', '/ssf/streams', undefined, '')).status, 401);
    assert.equal((await s.call('GET', '/ssf/streams', undefined, basic('web-app', 'wrong'))).status, 401);
    // A refused body creates nothing.
    for (const delivery of [
      { method: 'urn:ietf:rfc:8936', endpoint_url: 'https://rp.example.com/ssf' },
      { method: 'urn:ietf:rfc:8935', endpoint_url: 'https://rp.example.com/ssf#x' },
    ]) {
      const res = await s.call('POST', '/ssf/streams', { delivery, events_requested: ALL });
      assert.equal(res.status, 422, JSON.stringify(delivery));
    }
    assert.equal((await s.call('POST', '/ssf/streams', { events_requested: ALL })).status, 422);
    assert.equal((await rows(s.h, 'select 1 from ssf_streams where realm_id = $1', [s.realm.id])).length, 0);

    const stream = await s.createStream([...ALL, 'urn:example:unknown']);
    assert.equal(stream.iss, s.issuer);
    assert.equal(stream.aud, 'web-app');
    assert.deepEqual(stream.events_delivered, ALL);
    assert.equal(
      (await s.call('POST', '/ssf/streams', { delivery: stream.delivery, events_requested: ALL })).status,
      409,
    );
    const id = String(stream.stream_id);
    assert.deepEqual(await (await s.call('GET', '/ssf/streams')).json(), [stream]);
    assert.deepEqual(await (await s.call('GET', `/ssf/streams?stream_id=${id}`)).json(), stream);
    assert.equal((await s.call('GET', '/ssf/streams?stream_id=other')).status, 404);

    const patched = await s.call('PATCH', '/ssf/streams', {
      stream_id: id,
      events_requested: [`${CAEP}session-revoked`],
    });
    assert.equal(patched.status, 200);
    assert.deepEqual(((await patched.json()) as Row).events_delivered, [`${CAEP}session-revoked`]);

    const paused = await s.call('POST', '/ssf/status', {
      stream_id: id,
      status: 'paused',
      reason: 'maintenance',
    });
    assert.deepEqual(await paused.json(), { stream_id: id, status: 'paused', reason: 'maintenance' });
    assert.deepEqual(await (await s.call('GET', `/ssf/status?stream_id=${id}`)).json(), {
      stream_id: id,
      status: 'paused',
      reason: 'maintenance',
    });
    assert.equal((await s.call('POST', '/ssf/status', { stream_id: id, status: 'gone' })).status, 422);

    const audits = await rows(
      s.h,
      `select type from audit_events where realm_id = $1 and type like 'ssf.%' order by occurred_at`,
      [s.realm.id],
    );
    assert.deepEqual(audits.map((a) => a.type).sort(), [
      'ssf.stream.created',
      'ssf.stream.status_changed',
      'ssf.stream.updated',
    ]);
    assert.equal((await s.call('DELETE', `/ssf/streams?stream_id=${id}`)).status, 204);
    assert.deepEqual(await (await s.call('GET', '/ssf/streams')).json(), []);
  });

  test('case=verification: the receiver gets a signed SET with its state', async (t) => {
    const s = await setup(t);
    const stream = await s.createStream();
    const res = await s.call('POST', '/ssf/verify', { stream_id: stream.stream_id, state: 'st-1' });
    assert.equal(res.status, 204);
    assert.deepEqual(await s.deliver(), { delivered: 1 });
    const set = await s.verifySet(0);
    assert.deepEqual(set.events[VERIFICATION], { state: 'st-1' });
    assert.deepEqual(set.sub_id, { format: 'opaque', id: stream.stream_id });
  });

  test('case=sign-out, password change and suspension emit CAEP and RISC events about the account', async (t) => {
    const s = await setup(t);
    await s.createStream();
    const signedIn = await s.signIn();
    assert.equal(signedIn.status, 200);
    const userId = s.user?.id as string;
    // The user changes the password (ending other sessions), then an administrator suspends them.
    s.clock.advance(1000);
    const me = await apiCaller(s.h, s.realm, { audience: 'account', userId });
    const changed = await me.call('POST', '/me/password', {
      current_password: PASSWORD,
      new_password: 'an-entirely-new-passphrase-93',
    });
    assert.equal(changed.status < 300, true, await changed.clone().text());
    const admin = await apiCaller(s.h, s.realm);
    const suspended = await admin.call('POST', `/users/${userId}/suspend`, { reason: 'investigation' });
    assert.equal(suspended.status, 200, await suspended.clone().text());

    const types = new Set((await s.events()).filter((e) => e.user_id === userId).map((e) => e.event_type));
    assert.deepEqual([...types].sort(), [...ALL].sort());
    const n = (await s.events()).length;
    // The database stamped the events with its own clock; the test's clock moves past it.
    s.clock.advance(60_000);
    // One run takes at most 50.
    let sent = 0;
    while (sent < n) {
      const r = await s.deliver();
      sent += r.delivered ?? 0;
      assert.ok((r.delivered ?? 0) > 0, JSON.stringify(r));
    }
    const sets = await Promise.all(s.receiver.received.map((_r, i) => s.verifySet(i)));
    const ofUser = sets.filter((x) => x.sub_id.sub === userId);
    for (const x of ofUser) assert.deepEqual(x.sub_id, { format: 'iss_sub', iss: s.issuer, sub: userId });
    const byType = (type: string) => ofUser.filter((x) => type in x.events).map((x) => x.events[type] as Row);
    assert.ok(byType(`${CAEP}session-revoked`).length >= 1);
    assert.ok(
      byType(`${CAEP}credential-change`).some(
        (e) => e.credential_type === 'password' && e.change_type === 'update',
      ),
    );
    assert.equal(byType(`${RISC}account-disabled`).length, 1);
    for (const e of byType(`${CAEP}session-revoked`)) assert.equal(typeof e.event_timestamp, 'number');
  });

  test('case=a receiver answering 500 is retried with the same jti; paused streams wait', async (t) => {
    const s = await setup(t);
    const stream = await s.createStream();
    let answers = 0;
    s.receiver.answer = (_req, res) => {
      answers++;
      res.statusCode = answers === 1 ? 500 : 202;
      res.end();
    };
    await s.call('POST', '/ssf/verify', { stream_id: stream.stream_id });
    assert.deepEqual(await s.deliver(), { retrying: 1 });
    const [waiting] = await s.events();
    assert.equal(waiting?.state, 'retrying');
    const due = waiting?.next_attempt_at as Date;
    assert.ok(due > s.clock.now());
    await s.call('POST', '/ssf/status', { stream_id: stream.stream_id, status: 'paused' });
    s.clock.advance(due.getTime() - s.clock.now().getTime());
    assert.deepEqual(await s.deliver(), { postponed: 1 });
    await s.call('POST', '/ssf/status', { stream_id: stream.stream_id, status: 'enabled' });
    s.clock.advance(60_000);
    assert.deepEqual(await s.deliver(), { delivered: 1 });
    assert.equal((await s.verifySet(0)).jti, (await s.verifySet(1)).jti);
  });

  test('case=the egress guard refuses a private receiver the operator did not allow', async (t) => {
    const s = await setup(t, { allowlist: '' });
    const stream = await s.createStream();
    await s.call('POST', '/ssf/verify', { stream_id: stream.stream_id });
    assert.deepEqual(await s.deliver(), { failed: 1 });
    assert.equal(s.receiver.received.length, 0);
    assert.equal((await s.events())[0]?.last_category, 'egress_denied');
  });

  test('case=the worker runs ssf.deliver every 2 s; events expire after 7 days and go 14 days after finishing', async (t) => {
    const s = await setup(t);
    const task = TASKS.find((x) => x.name === 'ssf.deliver');
    assert.equal(task?.intervalMs, 2_000);
    const stream = await s.createStream();
    s.receiver.answer = (_req, res) => {
      res.statusCode = 503;
      res.end();
    };
    await s.call('POST', '/ssf/verify', { stream_id: stream.stream_id, state: 'a' });
    const worker = startWorker(s.h.ctx, { autostart: false });
    t.after(() => worker.stop());
    await worker.scheduler.runOnce(task!);
    assert.equal(s.receiver.received.length, 1);
    const created = (await s.events())[0]?.created_at as Date;
    const day = 86_400_000;
    assert.deepEqual(await cleanupSharedSignals(s.deps, new Date(created.getTime() + 6 * day)), {
      expired: 0,
      deleted: 0,
    });
    const expiredAt = new Date(created.getTime() + 7 * day + 1000);
    assert.deepEqual(await cleanupSharedSignals(s.deps, expiredAt), { expired: 1, deleted: 0 });
    assert.equal((await s.events())[0]?.state, 'expired');
    assert.deepEqual(await cleanupSharedSignals(s.deps, new Date(expiredAt.getTime() + 14 * day + 1000)), {
      expired: 0,
      deleted: 1,
    });
    assert.deepEqual(await s.events(), []);
  });
});
