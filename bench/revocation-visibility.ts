// How soon a bounded-state verifier (packages/verifier) refuses a token after its revocation
// (document 1, "What the service does" 4; document 2, Revocation exposure), while it verifies
// about 1,000 tokens a second. A server on a scratch PostgreSQL database, R users whose sessions
// are ended one after another through POST /users/{id}/revoke-sessions, and the verifier replaying
// GET /session-events. For each revocation: the time from the revoking request's answer (its
// transaction has committed) to the first verification that refuses the user's token, and the
// same from the moment the request was sent. The verifications are paced in ticks of 10 ms; each
// tick checks the watched token first, so the resolution is one tick.
//
// usage: node --import tsx bench/revocation-visibility.ts [R]      (R revocations, default 50)
//        BENCH_PG=postgres://postgres@127.0.0.1:5432/postgres (default): a scratch database is
//        created there and dropped after. RATE=1000 verifications a second.
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import pg from 'pg';
import { BoundedStateVerifier, VerificationError } from '../packages/verifier/src/index.ts';
import { databaseUrlFor } from '../test/harness/test-db.ts';

const R = Number(process.argv[2] ?? 50);
const RATE = Number(process.env.RATE ?? 1000);
const TICK_MS = 10;
const PER_TICK = Math.max(1, Math.round((RATE * TICK_MS) / 1000));
const POOL = 20;
const base = process.env.BENCH_PG ?? 'postgres://postgres@127.0.0.1:5432/postgres';
if (!/^postgres(ql)?:\/\/[^/]*@?(127\.0\.0\.1|localhost)[:/]/.test(base)) throw new Error('loopback only');

const name = `pa_bench_revvis_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: base });
await admin.connect();
await admin.query(`create database "${name}"`);
// The harness opens (and migrates) the database this names when it is first imported.
process.env.PROUDAUTH_TEST_DATABASE_URL = databaseUrlFor(base, name);

const hooks: (() => unknown)[] = [];
const t = { after: (fn: () => unknown) => hooks.push(fn) } as unknown as TestContext;
const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number;
};
const round = (x: number) => Math.round(x * 10) / 10;

try {
  const { AUDIENCE, verifierKit } = await import('../test/integration/verifier/verifier-kit.ts');
  const k = await verifierKit(t);
  const pool = await Promise.all(Array.from({ length: POOL }, () => k.subject()));
  const targets = [];
  for (let i = 0; i < R; i++) targets.push(await k.subject());

  const v = new BoundedStateVerifier({
    issuer: k.issuer,
    audience: AUDIENCE,
    streamClientId: k.reader.clientId,
    streamClientSecret: k.reader.secret,
  });
  hooks.push(() => v.stop());
  await v.start();

  let verified = 0;
  let refusedWrongly = 0;
  let failedClosed = 0;
  type Watched = { token: string; refusedAt: number | null };
  // Set and cleared by the revocation loop below while the load loop reads it.
  let watched = null as Watched | null;
  let running = true;
  const load = (async () => {
    let next = performance.now();
    let j = 0;
    while (running) {
      const work: Promise<unknown>[] = [];
      const w = watched;
      if (w && w.refusedAt === null)
        work.push(
          v.verify(w.token).then(
            () => verified++,
            (e: unknown) => {
              verified++;
              if (e instanceof VerificationError && e.code === 'invalid_token')
                w.refusedAt ??= performance.now();
              else failedClosed++;
            },
          ),
        );
      while (work.length < PER_TICK) {
        const s = pool[j++ % pool.length];
        if (!s) break;
        work.push(
          v.verify(s.token).then(
            () => verified++,
            (e: unknown) => {
              verified++;
              if (e instanceof VerificationError && e.code === 'stale_state') failedClosed++;
              else refusedWrongly++;
            },
          ),
        );
      }
      await Promise.all(work);
      next += TICK_MS;
      const wait = next - performance.now();
      if (wait > 0) await pause(wait);
    }
  })();

  const fromAnswer: number[] = [];
  const fromRequest: number[] = [];
  const t0 = performance.now();
  const v0 = verified;
  for (const target of targets) {
    const w: Watched = { token: target.token, refusedAt: null };
    if ((await v.verify(target.token)).claims.sub !== target.userId) throw new Error('not the user');
    watched = w;
    const sentAt = performance.now();
    await k.revokeSessions(target.userId);
    const answeredAt = performance.now();
    while (w.refusedAt === null) await pause(TICK_MS);
    fromAnswer.push(w.refusedAt - answeredAt);
    fromRequest.push(w.refusedAt - sentAt);
    watched = null;
    // Revocations spread out, so each one meets a long poll in its usual waiting state.
    await pause(100 + Math.random() * 200);
  }
  const seconds = (performance.now() - t0) / 1000;
  const rate = (verified - v0) / seconds;
  running = false;
  await load;

  const figure = (xs: number[]) => ({
    p50: round(pct(xs, 50)),
    p95: round(pct(xs, 95)),
    max: round(Math.max(...xs)),
  });
  process.stdout.write(
    `${JSON.stringify(
      {
        database: 'PostgreSQL (loopback), server, verifier and load in one Node.js process',
        node: process.version,
        revocations: R,
        verifications_per_second: Math.round(rate),
        ms_from_answer_to_refusal: figure(fromAnswer),
        ms_from_request_to_refusal: figure(fromRequest),
        tick_ms: TICK_MS,
        valid_tokens_refused: refusedWrongly,
        failed_closed: failedClosed,
      },
      null,
      2,
    )}\n`,
  );
} finally {
  for (const fn of hooks.reverse()) await fn();
  await admin.query(`drop database if exists "${name}" with (force)`);
  await admin.end();
  // The harness's database pool belongs to the harness module and is not closed by it.
  process.exit(process.exitCode ?? 0);
}
