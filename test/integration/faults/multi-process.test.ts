// Several processes on one PostgreSQL (issue #19): two `proudauth serve` (one of them a group of
// two processes sharing its listeners, server.processes = 2) and two `proudauth worker` against
// the test run's database. Leases hold (a periodic task runs in one worker at a time, and a killed
// worker's lease is taken over), a refresh-token reuse race across both servers revokes the family
// exactly once, and both servers' key-set caches converge after a rotation. Times are measured and
// reported as diagnostics, never asserted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TEST_DATABASE_URL } from '../../harness/test-db.ts';
import { Background } from '../cli/cli-process.ts';
import { insertKey } from '../keys/key-helpers.ts';
import { databaseUrlOf, drillEnv, serveUrls, sleep, until, workerUrl } from './drill-kit.ts';
import { seedDrill } from './drill-seed.ts';

const SKIP = TEST_DATABASE_URL
  ? false
  : 'several processes share one PostgreSQL (PROUDAUTH_TEST_DATABASE_URL is unset): the embedded database belongs to one process';

const TASK = 'outbox.dispatch'; // leased, one-second interval

async function metricsText(url: string): Promise<string> {
  const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) });
  assert.equal(res.status, 200);
  return res.text();
}

/** A sample of the Prometheus text, 0 when the series is absent. */
function sample(text: string, series: string): number {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return 0;
}

async function taskRuns(workerInternal: string): Promise<{ success: number; skipped: number }> {
  const text = await metricsText(workerInternal);
  return {
    success: sample(text, `service_worker_runs_total{task="${TASK}",outcome="success"}`),
    skipped: sample(text, `service_worker_runs_total{task="${TASK}",outcome="skipped"}`),
  };
}

async function publishedKids(publicUrl: string, realm: string): Promise<string[]> {
  const res = await fetch(`${publicUrl}/realms/${realm}/jwks`, { signal: AbortSignal.timeout(10_000) });
  assert.equal(res.status, 200);
  return ((await res.json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
}

test('several serve and worker processes on one PostgreSQL', { skip: SKIP, timeout: 300_000 }, async (t) => {
  const seed = await seedDrill(t, 2);
  const { h, realm } = seed;
  const dbUrl = await databaseUrlOf(h.ctx.db);
  const env = (extra: Record<string, string> = {}) => drillEnv(seed, dbUrl, extra);

  const serveA = new Background('proudauth', ['serve'], env({ PROUDAUTH_SERVER_PROCESSES: '2' }));
  const serveB = new Background('proudauth', ['serve'], env());
  const workers = [
    new Background('proudauth', ['worker'], env()),
    new Background('proudauth', ['worker'], env()),
  ];
  const all = [serveA, serveB, ...workers];
  t.after(() => {
    for (const p of all) p.kill();
  });
  const a = await serveUrls(serveA);
  const b = await serveUrls(serveB);
  const workerUrls = [await workerUrl(workers[0] as Background), await workerUrl(workers[1] as Background)];

  await t.test(
    'serve with server.processes = 2 runs two processes behind one listener; /metrics sums them',
    async () => {
      await until('both processes of the group started', 60_000, () =>
        (serveA.stdout.match(/"command":"serve"/g) ?? []).length >= 2 ? true : null,
      );
      const n = 12;
      for (let i = 0; i < n; i++) {
        const res = await fetch(`${a.publicUrl}/realms/no-such-realm-mp/jwks`);
        assert.equal(res.status, 404);
        await res.arrayBuffer();
      }
      // Only these requests answer 4xx on this route; connections went to either process.
      const text = await metricsText(a.internalUrl);
      assert.equal(sample(text, 'service_http_requests_total{route="/realms/:realm/jwks",status="4xx"}'), n);
    },
  );

  await t.test(
    "a periodic task runs in one worker at a time; a killed worker's lease is taken over",
    async () => {
      await until('both workers ticked', 60_000, async () => {
        const r = await Promise.all(workerUrls.map(taskRuns));
        return r.every((x) => x.success + x.skipped > 0) ? true : null;
      });
      const from = Date.now();
      const before = await Promise.all(workerUrls.map(taskRuns));
      await sleep(5000);
      const after = await Promise.all(workerUrls.map(taskRuns));
      const elapsedS = (Date.now() - from) / 1000;
      const ran = after.map((x, i) => x.success - (before[i]?.success ?? 0));
      const skipped = after.reduce((n, x, i) => n + x.skipped - (before[i]?.skipped ?? 0), 0);
      // A run needs the lease, which lasts one interval (1 s) and is held by one worker: at most one
      // run per second in the whole deployment, however the two workers' ticks interleave.
      assert.ok(
        (ran[0] ?? 0) + (ran[1] ?? 0) <= Math.ceil(elapsedS) + 2,
        `runs ${ran.join(' + ')} in ${elapsedS} s`,
      );
      assert.ok(skipped > 0, 'the worker without the lease skipped its ticks');
      t.diagnostic(`${TASK} over ${elapsedS.toFixed(1)} s: runs ${ran.join(' / ')}, skipped ${skipped}`);

      // The worker that ran the task in the window held its lease; once it is killed, the other one
      // must take the lease over and run the task.
      const holderIndex = (ran[0] ?? 0) >= (ran[1] ?? 0) ? 0 : 1;
      assert.ok((ran[holderIndex] ?? 0) > 0, 'a worker ran the task');
      const victim = workers[holderIndex] as Background;
      const survivorUrl = workerUrls[1 - holderIndex] as string;
      const survivorBefore = await taskRuns(survivorUrl);
      const killedAt = Date.now();
      victim.kill();
      await victim.exited;
      await until('the surviving worker runs the task', 60_000, async () =>
        (await taskRuns(survivorUrl)).success >= survivorBefore.success + 2 ? true : null,
      );
      t.diagnostic(`lease taken over ${Date.now() - killedAt} ms after the holder was killed`);
    },
  );

  await t.test('a refresh-token reuse race across both servers revokes the family once', async () => {
    const token = seed.refreshTokens[0] as string;
    const basic = `Basic ${Buffer.from(`${encodeURIComponent(seed.web.clientId)}:${encodeURIComponent(seed.web.secret)}`).toString('base64')}`;
    const refresh = async (base: string) => {
      const res = await fetch(`${base}/realms/${realm.name}/oauth/token`, {
        method: 'POST',
        headers: { authorization: basic, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: token }).toString(),
      });
      return { status: res.status, body: (await res.json()) as { error?: string } };
    };
    const answers = await Promise.all([a, b, a, b].map((s) => refresh(s.publicUrl)));
    assert.deepEqual(answers.map((x) => x.status).sort(), [200, 400, 400, 400]);
    for (const x of answers.filter((x) => x.status === 400)) assert.equal(x.body.error, 'invalid_grant');
    const revoked = await h.ctx.db.query(
      'select 1 from refresh_families where realm_id = $1 and revoked_at is not null',
      [realm.id],
    );
    assert.equal(revoked.rowCount, 1, 'one family revoked, the other untouched');
    const audits = await h.ctx.db.query(
      `select 1 from audit_events where realm_id = $1 and type = 'token.refresh_reuse_detected'`,
      [realm.id],
    );
    assert.equal(audits.rowCount, 1);
    const events = await h.ctx.db.query(
      `select 1 from outbox where realm_id = $1 and event_type = 'security.refresh_reuse_detected'`,
      [realm.id],
    );
    assert.equal(events.rowCount, 1);
    // The surviving worker dispatches it.
    await until('the event is dispatched', 60_000, async () => {
      const r = await h.ctx.db.query(
        `select 1 from outbox where realm_id = $1 and event_type = 'security.refresh_reuse_detected'
           and dispatched_at is not null`,
        [realm.id],
      );
      return r.rowCount === 1 ? true : null;
    });
  });

  await t.test("both servers' key sets converge after a rotation", async () => {
    const keyring = h.ctx.keyring;
    assert.ok(keyring);
    for (const s of [a, b]) await publishedKids(s.publicUrl, realm.name); // warm both caches
    // A rotation starts by publishing the successor as pending (spec doc 2, Signing key states).
    const rotatedAt = Date.now();
    const material = await insertKey(h.ctx.db, keyring, realm.id, 'pending', new Date(), 'ES256');
    await until('every serve process publishes the new key', 60_000, async () => {
      // Several requests to the group, so that both of its processes answer at least once.
      for (const s of [a, a, a, a, b]) {
        if (!(await publishedKids(s.publicUrl, realm.name)).includes(material.kid)) return null;
      }
      return true;
    });
    t.diagnostic(`key sets converged ${Date.now() - rotatedAt} ms after the rotation (cache: 5 s)`);
  });

  await t.test('no process logged a fatal or unhandled error', () => {
    for (const p of all) {
      assert.doesNotMatch(p.stdout + p.stderr, /"level":60|unhandled error|Unhandled 'error' event/);
    }
    assert.ok(serveA.running && serveB.running);
  });
});
