// OpenID Connect Back-Channel Logout 1.0 end to end: a session that ends (sign-out, administrator
// revocation, suspension) queues a logout token per client that took part in it, in the same
// transaction; the worker signs it and POSTs it through the egress guard to a real receiver here,
// which verifies it with jose against the realm's JWKS as a relying party would. Retries, the
// guard, the metric and client registration are covered too.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import { createRemoteJWKSet, decodeJwt, jwtVerify } from 'jose';
import { TASKS } from '../../../src/main/worker/tasks.ts';
import { startWorker, workerDeps } from '../../../src/main/worker/worker.ts';
import {
  BACKCHANNEL_LOGOUT_EVENT,
  type BackchannelLogoutDeps,
  cleanupLogoutDeliveries,
  deliverDueLogouts,
} from '../../../src/oauth/backchannel-logout.task.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import type { Harness } from '../../harness/harness.ts';
import { movableClock, rows, signinSetup } from '../../harness/signin-kit.ts';
import { clientSecret, codeFlow, oauthPost } from '../../harness/token-kit.ts';
import { type Receiver, startReceiver } from '../webhooks/webhook-kit.ts';

type Row = Record<string, unknown>;

async function setup(
  t: TestContext,
  opts: { allowlist?: string; uri?: (r: Receiver) => string; sessionRequired?: boolean } = {},
) {
  const receiver = await startReceiver(t);
  const clock = movableClock();
  const s = await signinSetup(t, {
    clock,
    overrides: opts.allowlist === '' ? {} : { 'delivery.egress_allowlist': opts.allowlist ?? '127.0.0.1/32' },
    client: {
      backchannelLogoutUri: opts.uri ? opts.uri(receiver) : `http://127.0.0.1:${receiver.port}/bcl?app=1`,
      backchannelLogoutSessionRequired: opts.sessionRequired ?? true,
    },
  });
  const { h, realm, client } = s;
  if (!client) throw new Error('no client');
  const creds = { clientId: 'web-app', secret: await clientSecret(h, realm, client) };
  const outcomes: string[] = [];
  const deps: BackchannelLogoutDeps = {
    ...workerDeps(h.ctx),
    logoutDeliveryEnded: (o) => {
      outcomes.push(o);
    },
  };
  // Tests share this file's database: no delivery of this realm may reach a later test's worker.
  t.after(async () => {
    await h.ctx.db.query('delete from backchannel_logout_deliveries where realm_id = $1', [realm.id]);
  });
  /** A sign-in through the code flow: the tokens, with the session id of the ID token. */
  const signIn = async () => {
    const res = await codeFlow(h, realm, creds, { start: { scope: 'openid', nonce: 'n-1' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return { tokens: res.body, sid: decodeJwt(res.body.id_token).sid as string };
  };
  const deliver = () => deliverDueLogouts(deps, 'test-worker', clock.now());
  const deliveries = (): Promise<Row[]> =>
    rows(h, 'select * from backchannel_logout_deliveries where realm_id = $1 order by created_at, id', [
      realm.id,
    ]);
  const jwks = createRemoteJWKSet(new URL(`${h.publicUrl}/realms/${realm.name}/jwks`));
  const issuer = `${h.ctx.config.server.publicOrigin}/realms/${realm.name}`;
  /** What a relying party does with a logout token (Back-Channel Logout 1.0, section 2.6). */
  const verifyLogoutToken = async (body: string) => {
    const form = new URLSearchParams(body);
    const token = form.get('logout_token');
    assert.ok(token, 'a logout_token form parameter');
    const { payload, protectedHeader } = await jwtVerify(token, jwks, {
      issuer,
      audience: 'web-app',
      typ: 'logout+jwt',
      requiredClaims: ['iat', 'exp', 'jti', 'events'],
    });
    assert.equal('nonce' in payload, false, 'a logout token never carries a nonce');
    assert.deepEqual((payload.events as Row)[BACKCHANNEL_LOGOUT_EVENT], {});
    return { payload, protectedHeader };
  };
  return {
    ...s,
    h,
    realm,
    creds,
    receiver,
    clock,
    outcomes,
    deps,
    signIn,
    deliver,
    deliveries,
    verifyLogoutToken,
  };
}

const countSessions = async (h: Harness, realmId: string, sid: string) =>
  (await rows(h, 'select revoked_at from sessions where realm_id = $1 and id = $2', [realmId, sid]))[0];

describe('oauth › back-channel logout', () => {
  test('case=sign-out: one signed logout token with sub, sid and the event reaches the client', async (t) => {
    const s = await setup(t);
    const { sid, tokens } = await s.signIn();
    assert.deepEqual(await s.deliveries(), [], 'nothing is queued while the session lives');

    const res = await oauthPost(s.h, s.realm, 'logout', { id_token_hint: tokens.id_token });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok((await countSessions(s.h, s.realm.id, sid))?.revoked_at);
    const [queued] = await s.deliveries();
    assert.equal(queued?.state, 'pending');
    assert.equal(queued?.session_id, sid);

    assert.deepEqual(await s.deliver(), { delivered: 1 });
    assert.equal(s.receiver.received.length, 1);
    const got = s.receiver.received[0]!;
    assert.equal(got.url, '/bcl?app=1');
    assert.equal(got.headers['content-type'], 'application/x-www-form-urlencoded');
    const { payload, protectedHeader } = await s.verifyLogoutToken(got.body);
    assert.equal(protectedHeader.typ, 'logout+jwt');
    assert.equal(payload.sid, sid);
    assert.equal(payload.sub, s.user?.id);
    assert.equal(payload.jti, queued?.id);
    assert.ok((payload.exp as number) > (payload.iat as number));
    assert.deepEqual(s.outcomes, ['delivered']);
    const [done] = await s.deliveries();
    assert.equal(done?.state, 'delivered');
    assert.equal(done?.last_status, 204);

    // Nothing more is due.
    assert.deepEqual(await s.deliver(), {});
    assert.equal(s.receiver.received.length, 1);
  });

  test('case=a receiver answering 500 is retried with backoff and the same jti until it answers 200', async (t) => {
    const s = await setup(t);
    const { sid } = await s.signIn();
    let answers = 0;
    s.receiver.answer = (_req, res) => {
      answers++;
      res.statusCode = answers === 1 ? 500 : 200;
      res.end();
    };
    await s.h.ctx.db.query(
      `update sessions set revoked_at = $3, revoked_reason = 'admin' where realm_id = $1 and id = $2`,
      [s.realm.id, sid, s.clock.now()],
    );
    assert.deepEqual(await s.deliver(), { retrying: 1 });
    const [waiting] = await s.deliveries();
    assert.equal(waiting?.state, 'retrying');
    assert.equal(waiting?.last_status, 500);
    const due = waiting?.next_attempt_at as Date;
    assert.ok(due > s.clock.now(), 'the retry waits');
    // Not due yet: nothing is sent.
    assert.deepEqual(await s.deliver(), {});
    s.clock.advance(due.getTime() - s.clock.now().getTime());
    assert.deepEqual(await s.deliver(), { delivered: 1 });
    assert.equal(s.receiver.received.length, 2);
    const first = await s.verifyLogoutToken(s.receiver.received[0]!.body);
    const second = await s.verifyLogoutToken(s.receiver.received[1]!.body);
    assert.equal(first.payload.jti, second.payload.jti);
    assert.deepEqual(s.outcomes, ['retrying', 'delivered']);
  });

  test('case=a receiver that keeps failing gets a first attempt and 8 retries, then the delivery fails', async (t) => {
    const s = await setup(t);
    s.receiver.answer = (_req, res) => {
      res.statusCode = 503;
      res.end();
    };
    await s.signIn();
    await s.h.ctx.db.query(
      `update sessions set revoked_at = $2, revoked_reason = 'admin' where realm_id = $1`,
      [s.realm.id, s.clock.now()],
    );
    for (let i = 0; i < 9; i++) {
      const [d] = await s.deliveries();
      const due = d?.next_attempt_at as Date;
      s.clock.advance(Math.max(0, due.getTime() - s.clock.now().getTime()));
      await s.deliver();
    }
    assert.equal(s.receiver.received.length, 9);
    const [d] = await s.deliveries();
    assert.equal(d?.state, 'failed');
    assert.equal(d?.attempts, 9);
    assert.deepEqual(s.outcomes, [...Array(8).fill('retrying'), 'failed']);
    assert.deepEqual(await s.deliver(), {});
  });

  test('case=a 400 from the receiver is final; a client without a URI is never queued', async (t) => {
    const s = await setup(t);
    s.receiver.answer = (_req, res) => {
      res.statusCode = 400;
      res.end();
    };
    const other = await s.h.createClient(s.realm, {
      clientId: 'no-bcl',
      name: 'No BCL',
      type: 'web',
      redirectUris: ['https://app.example.com/callback'],
    });
    const { sid } = await s.signIn();
    // The other client took part in the session too, but registered no URI.
    await s.h.ctx.db.query(
      `insert into session_clients (realm_id, session_id, client_id, user_id) values ($1, $2, $3, $4)`,
      [s.realm.id, sid, other.client_id, s.user?.id],
    );
    await s.h.ctx.db.query(
      `update sessions set revoked_at = $3, revoked_reason = 'admin' where realm_id = $1 and id = $2`,
      [s.realm.id, sid, s.clock.now()],
    );
    const queued = await s.deliveries();
    assert.deepEqual(
      queued.map((d) => d.client_id),
      ['web-app'],
    );
    assert.deepEqual(await s.deliver(), { failed: 1 });
    assert.equal((await s.deliveries())[0]?.last_category, 'rejected');
  });

  test('case=suspension ends every session of the account: one token per session, each with its sid', async (t) => {
    const s = await setup(t);
    const one = await s.signIn();
    const two = await s.signIn();
    const admin = await apiCaller(s.h, s.realm);
    const res = await admin.call('POST', `/users/${s.user?.id}/suspend`, { reason: 'investigation' });
    assert.equal(res.status, 200, await res.text());
    const queued = await s.deliveries();
    assert.deepEqual(queued.map((d) => d.session_id).sort(), [one.sid, two.sid].sort());
    assert.deepEqual(await s.deliver(), { delivered: 2 });
    const sids = await Promise.all(
      s.receiver.received.map(async (r) => (await s.verifyLogoutToken(r.body)).payload.sid),
    );
    assert.deepEqual(sids.sort(), [one.sid, two.sid].sort());
  });

  test('case=the egress guard refuses a private receiver the operator did not allow; nothing is sent', async (t) => {
    const s = await setup(t, { allowlist: '' });
    await s.signIn();
    await s.h.ctx.db.query(
      `update sessions set revoked_at = $2, revoked_reason = 'admin' where realm_id = $1`,
      [s.realm.id, s.clock.now()],
    );
    assert.deepEqual(await s.deliver(), { failed: 1 });
    assert.equal(s.receiver.received.length, 0);
    assert.equal((await s.deliveries())[0]?.last_category, 'egress_denied');
  });

  test('case=the worker task counts attempts in service_delivery_total{channel="backchannel_logout"}', async (t) => {
    const s = await setup(t);
    await s.signIn();
    await s.h.ctx.db.query(
      `update sessions set revoked_at = $2, revoked_reason = 'admin' where realm_id = $1`,
      [s.realm.id, s.clock.now()],
    );
    const worker = startWorker(s.h.ctx, { autostart: false });
    t.after(() => worker.stop());
    const task = TASKS.find((x) => x.name === 'backchannel_logout.deliver');
    assert.ok(task);
    await worker.scheduler.runOnce(task);
    assert.equal(s.receiver.received.length, 1);
    const metrics = await (await s.h.internal('/metrics')).text();
    assert.match(metrics, /^service_delivery_total\{channel="backchannel_logout",outcome="delivered"\} 1$/m);
  });

  test('case=deliveries are deleted privacy.history_retention after creation', async (t) => {
    const s = await setup(t);
    await s.signIn();
    await s.h.ctx.db.query(
      `update sessions set revoked_at = $2, revoked_reason = 'admin' where realm_id = $1`,
      [s.realm.id, s.clock.now()],
    );
    await s.deliver();
    assert.deepEqual(await cleanupLogoutDeliveries(s.deps, s.clock.now()), { deleted: 0 });
    const later = new Date(s.clock.now().getTime() + s.deps.historyRetentionMs + 1000);
    assert.deepEqual(await cleanupLogoutDeliveries(s.deps, later), { deleted: 1 });
    assert.deepEqual(await s.deliveries(), []);
  });

  test('case=registration: backchannel_logout_uri is validated, shown, changed and cleared', async (t) => {
    const s = await setup(t);
    const admin = await apiCaller(s.h, s.realm);
    const base = { name: 'RP', type: 'web', redirect_uris: ['https://rp.example.com/cb'] };
    for (const bad of [
      'not a url',
      'ftp://rp.example.com/bcl',
      'https://rp.example.com/bcl#frag',
      'https://u:p@rp.example.com/',
    ]) {
      const res = await admin.call('POST', '/clients', {
        ...base,
        client_id: 'rp-bad',
        backchannel_logout_uri: bad,
      });
      assert.equal(res.status, 422, bad);
      const body = (await res.json()) as { errors: { field: string }[] };
      assert.ok(
        body.errors.some((e) => e.field === 'backchannel_logout_uri'),
        bad,
      );
    }
    assert.equal((await rows(s.h, `select 1 from clients where client_id = 'rp-bad'`, [])).length, 0);
    const created = await admin.call('POST', '/clients', {
      ...base,
      client_id: 'rp',
      backchannel_logout_uri: 'https://rp.example.com/bcl?x=1',
      backchannel_logout_session_required: true,
    });
    assert.equal(created.status, 201, await created.clone().text());
    const c = (await created.json()) as Row;
    assert.equal(c.backchannel_logout_uri, 'https://rp.example.com/bcl?x=1');
    assert.equal(c.backchannel_logout_session_required, true);
    const cleared = await admin.call('PATCH', '/clients/rp', { backchannel_logout_uri: null });
    assert.equal(cleared.status, 200, await cleared.clone().text());
    assert.equal(((await cleared.json()) as Row).backchannel_logout_uri, null);
    const refused = await admin.call('PATCH', '/clients/rp', {
      backchannel_logout_uri: 'https://rp.example.com/#x',
    });
    assert.equal(refused.status, 422);
  });

  test('case=discovery advertises back-channel logout with sid', async (t) => {
    const s = await setup(t);
    const res = await s.h.get(`/realms/${s.realm.name}/.well-known/openid-configuration`);
    const doc = (await res.json()) as Row;
    assert.equal(doc.backchannel_logout_supported, true);
    assert.equal(doc.backchannel_logout_session_supported, true);
  });
});
