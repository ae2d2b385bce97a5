import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  enqueueNotification,
  type Mailer,
  type MailMessage,
  NotificationSender,
  PermanentDeliveryError,
} from '../../../src/notifications/index.ts';
import type { RealmRow } from '../../../src/realms/index.ts';
import type { Harness } from '../../harness/harness.ts';
import { startHarness } from '../../harness/harness.ts';
import { codeIn, startMailSink } from '../../harness/mail-kit.ts';
import { rows } from '../../harness/signin-kit.ts';
import { RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';

const MIN = 60_000;

async function queueMail(
  h: Harness,
  realm: RealmRow,
  to: string,
  code: string,
  organizationId: string | null = null,
) {
  const keyring = h.ctx.keyring;
  if (!keyring) throw new Error('no keyring');
  return h.ctx.db.tx((tx) =>
    enqueueNotification(
      tx,
      keyring,
      {
        realmId: realm.id,
        channel: 'email',
        template: 'login_code',
        locale: 'en',
        to,
        vars: { realm: realm.display_name, code, minutes: 10 },
        organizationId,
      },
      h.ctx.clock.now(),
    ),
  );
}

function sender(h: Harness, holder: string, mailer: Mailer | null = h.ctx.mailer, share = 25) {
  const keyring = h.ctx.keyring;
  if (!keyring) throw new Error('no keyring');
  return new NotificationSender(
    { db: h.ctx.db, keyring, clock: h.ctx.clock, mailer, sms: null, tenantBatchShare: share },
    holder,
  );
}

class CountingMailer implements Mailer {
  sent: MailMessage[] = [];
  failures: Error[] = [];
  async send(m: MailMessage): Promise<void> {
    const f = this.failures.shift();
    if (f) throw f;
    await new Promise((r) => setTimeout(r, 5));
    this.sent.push(m);
  }
}

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary columns
const row = async (h: Harness, realm: RealmRow, id: string): Promise<any> =>
  (await rows(h, 'select * from notifications where realm_id = $1 and id = $2', [realm.id, id]))[0];
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary members
const statusOf = async (h: Harness): Promise<any> => (await h.internal('/status')).json();

describe('notifications › queue', () => {
  test('case=a queued mail reaches a real SMTP server with text and HTML, and the row ends sent', async (t) => {
    const mail = await startMailSink(t);
    const h = await startHarness(t, { overrides: mail.overrides });
    const realm = await h.createRealm();
    const id = await queueMail(h, realm, 'bob@example.com', '123456');
    const stored = await row(h, realm, id);
    assert.equal(stored.state, 'queued');
    assert.doesNotMatch(JSON.stringify(stored.payload), /123456|bob@example/, 'the payload is sealed');
    const report = await sender(h, 'w1').runOnce();
    assert.deepEqual(report, { sent: 1 });
    const got = await mail.waitFor('bob@example.com');
    assert.equal(codeIn(got), '123456');
    assert.match(got.subject, new RegExp(realm.display_name));
    assert.match(got.html, /123456/);
    assert.equal(got.from, 'idp@example.com');
    assert.equal((await row(h, realm, id)).state, 'sent');
  });

  test('case=a transient failure is retried after a backoff; a permanent one fails the row', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    const mailer = new CountingMailer();
    mailer.failures.push(new Error('connection refused'));
    const id = await queueMail(h, realm, 'carol@example.com', '222222');
    assert.deepEqual(await sender(h, 'w1', mailer).runOnce(), { retry: 1 });
    const waiting = await row(h, realm, id);
    assert.equal(waiting.state, 'queued');
    assert.equal(waiting.last_error, 'connection refused');
    assert.ok(new Date(waiting.available_at).getTime() > h.ctx.clock.now().getTime(), 'backoff');
    assert.deepEqual(await sender(h, 'w1', mailer).runOnce(), {}, 'not due during the backoff');
    h.clock.advance(MIN);
    assert.deepEqual(await sender(h, 'w1', mailer).runOnce(), { sent: 1 });
    assert.equal(mailer.sent.length, 1);

    mailer.failures.push(new PermanentDeliveryError('smtp rejected the message (550)'));
    const bad = await queueMail(h, realm, 'nobody@example.com', '333333');
    assert.deepEqual(await sender(h, 'w1', mailer).runOnce(), { failed: 1 });
    assert.equal((await row(h, realm, bad)).state, 'failed');
  });

  test('case=a worker that dies mid-send leaves the message to another worker after its lease', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    const id = await queueMail(h, realm, 'dave@example.com', '444444');
    // Worker A claims and dies: its mailer never answers and nothing records the outcome.
    const hanging: Mailer = { send: () => new Promise(() => {}) };
    void sender(h, 'worker-a', hanging).runOnce();
    for (let i = 0; i < 100 && (await row(h, realm, id)).state !== 'sending'; i++)
      await new Promise((r) => setTimeout(r, 10));
    assert.equal((await row(h, realm, id)).locked_by, 'worker-a');
    const mailer = new CountingMailer();
    assert.deepEqual(await sender(h, 'worker-b', mailer).runOnce(), {}, 'leased to A');
    h.clock.advance(2 * MIN);
    assert.deepEqual(await sender(h, 'worker-b', mailer).runOnce(), { sent: 1 });
    assert.equal(mailer.sent[0]?.to, 'dave@example.com');
    const done = await row(h, realm, id);
    assert.equal(done.state, 'sent');
    assert.equal(done.attempts, 2);
  });

  test('case=two workers racing never send one message twice', { skip: RACE_NEEDS_POSTGRES }, async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    for (let i = 0; i < 30; i++) await queueMail(h, realm, `u${i}@race.example`, String(100000 + i));
    const mailer = new CountingMailer();
    const a = sender(h, 'worker-a', mailer);
    const b = sender(h, 'worker-b', mailer);
    // Rounds of both workers claiming at once until the queue is empty: a claim that loses the race
    // finds the rows locked and takes none, so more than one round is needed. Other tests' rows in
    // this file's database may be sent too; only this test's recipients count.
    const mine = () => mailer.sent.map((m) => m.to).filter((to) => to.endsWith('@race.example'));
    for (let round = 0; round < 20 && mine().length < 30; round++)
      await Promise.all([a.runOnce(10), b.runOnce(10), a.runOnce(10), b.runOnce(10)]);
    const to = mine();
    assert.equal(to.length, 30);
    assert.equal(new Set(to).size, 30, 'each message once');
  });

  test('case=one batch takes at most workers.tenant_batch_share messages of one organization', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    for (let i = 0; i < 12; i++) await queueMail(h, realm, `a${i}@fair.example`, '555555', 'org_a');
    for (let i = 0; i < 3; i++) await queueMail(h, realm, `b${i}@fair.example`, '666666', 'org_b');
    const mailer = new CountingMailer();
    await sender(h, 'w1', mailer, 5).runOnce();
    const mine = mailer.sent.filter((m) => m.to.endsWith('@fair.example'));
    assert.equal(mine.filter((m) => m.to.startsWith('a')).length, 5, 'organization a: its share');
    assert.equal(mine.filter((m) => m.to.startsWith('b')).length, 3, 'organization b: all of its own');
  });

  test('case=payloads go after delivery.payload_retention, rows after privacy.history_retention', async (t) => {
    const h = await startHarness(t, { overrides: { 'delivery.payload_retention': '1d' } });
    const realm = await h.createRealm();
    const mailer = new CountingMailer();
    const id = await queueMail(h, realm, 'erin@example.com', '777777');
    await sender(h, 'w1', mailer).runOnce();
    const { cleanupNotifications } = await import('../../../src/notifications/index.ts');
    const deps = {
      db: h.ctx.db,
      payloadRetentionMs: h.ctx.config.delivery.payloadRetentionMs,
      historyRetentionMs: h.ctx.config.privacy.historyRetentionMs,
    };
    await cleanupNotifications(deps, h.ctx.clock.now());
    assert.ok((await row(h, realm, id)).payload, 'kept within the retention');
    await cleanupNotifications(deps, new Date(h.ctx.clock.now().getTime() + 2 * 86_400_000));
    const purged = await row(h, realm, id);
    assert.equal(purged.payload, null);
    assert.equal(purged.state, 'sent');
    await cleanupNotifications(deps, new Date(h.ctx.clock.now().getTime() + 181 * 86_400_000));
    assert.equal(await row(h, realm, id), undefined);
  });

  test('case=/status reports email_delivery and /metrics the oldest due notification', async (t) => {
    const mail = await startMailSink(t);
    const h = await startHarness(t, { overrides: mail.overrides });
    const realm = await h.createRealm();
    await queueMail(h, realm, 'fred@example.com', '888888');
    h.clock.advance(301_000);
    const status = await statusOf(h);
    assert.equal(status.capabilities.email_delivery, 'degraded');
    assert.ok(status.backlog_oldest_seconds.email_delivery >= 300);
    const metrics = await (await h.internal('/metrics')).text();
    const m = /^service_notification_oldest_due_seconds (\d+)/m.exec(metrics);
    assert.ok(m && Number(m[1]) >= 300, metrics.slice(0, 200));
    await sender(h, 'w1').runOnce();
    const after = await statusOf(h);
    assert.equal(after.capabilities.email_delivery, 'ok');
  });

  test('case=the worker wiring: notifications.send over SMTP, counted in service_delivery_total', async (t) => {
    const { startWorker } = await import('../../../src/main/worker/worker.ts');
    const { TASKS } = await import('../../../src/main/worker/tasks.ts');
    const mail = await startMailSink(t);
    const h = await startHarness(t, { overrides: mail.overrides });
    const realm = await h.createRealm();
    await queueMail(h, realm, 'hank@wired.example', '121212');
    const worker = startWorker(h.ctx, { autostart: false });
    t.after(() => worker.stop());
    const task = TASKS.find((x) => x.name === 'notifications.send');
    assert.ok(task);
    const report = await worker.scheduler.runOnce(task);
    assert.ok((report?.sent ?? 0) >= 1, JSON.stringify(report));
    assert.equal(codeIn(await mail.waitFor('hank@wired.example', 1, realm.display_name)), '121212');
    const metrics = await h.ctx.metrics.render();
    assert.match(metrics, /^service_delivery_total\{channel="notification",outcome="sent"\} [1-9]/m);
  });

  test('case=without a mail transport, queued mail ages and degrades email_delivery', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    assert.equal((await statusOf(h)).capabilities.email_delivery, 'ok');
    await queueMail(h, realm, 'gina@example.com', '999999');
    await sender(h, 'w1', null).runOnce();
    h.clock.advance(10 * MIN);
    assert.equal((await statusOf(h)).capabilities.email_delivery, 'degraded');
  });
});
