// The shared counter behind the abuse budgets (src/platform/abuse-budget.ts): concurrent spends on
// one hot bucket land on a few shard rows and add up exactly; a block lease writes once per block.
// The timings are printed as diagnostics for the lead's measurements, never asserted.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { BlockLease, pruneBudgets, spendBudgets } from '../../../src/platform/abuse-budget.ts';
import { startHarness } from '../../harness/harness.ts';
import { RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';

const sum = async (h: Awaited<ReturnType<typeof startHarness>>, bucket: string) => {
  const r = await h.ctx.db.query<{ hits: number; shards: number }>(
    'select coalesce(sum(hits), 0)::int as hits, count(*)::int as shards from abuse_counters where bucket = $1',
    [bucket],
  );
  return r.rows[0] ?? { hits: 0, shards: 0 };
};

describe('abuse budgets › shared counters', () => {
  test('case=400 concurrent spends on one bucket from two processes add up exactly on at most 8 rows', {
    skip: RACE_NEEDS_POSTGRES,
  }, async (t) => {
    const h = await startHarness(t);
    const other = await startHarness(t, { db: h.ctx.db });
    const bucket = `test:hot:${Date.now()}:${Math.random()}`;
    const budget = { bucket, limit: 1_000_000, windowMs: 3_600_000 };
    const now = new Date();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: 400 }, (_, i) => spendBudgets((i % 2 ? other : h).ctx.db, [budget], now)),
    );
    const ms = performance.now() - started;
    const { hits, shards } = await sum(h, bucket);
    t.diagnostic(`400 spends in ${ms.toFixed(0)} ms on ${shards} rows`);
    assert.equal(hits, 400);
    assert.ok(shards >= 2 && shards <= 8, `${shards} shard rows`);
  });

  test('case=a block lease writes once per block and refuses past the limit', async (t) => {
    const h = await startHarness(t);
    const bucket = `test:lease:${Date.now()}:${Math.random()}`;
    const lease = new BlockLease();
    const budget = { bucket, limit: 500, windowMs: 3_600_000 };
    const now = new Date();
    let ok = 0;
    for (let i = 0; i < 600; i++) if ((await lease.take(h.ctx.db, budget, now)).ok) ok++;
    const { hits } = await sum(h, bucket);
    t.diagnostic(`${ok} of 600 taken; ${hits} units reserved in blocks of 10`);
    assert.equal(ok, 500);
    // 50 blocks of 10 were reserved, plus the one refused block.
    assert.equal(hits, 510);
    assert.ok((await pruneBudgets(h.ctx.db, new Date(now.getTime() + 2 * 3_600_000))) >= 1);
  });
});
