// The label-combination caps of spec doc 2, Limits (Metrics labels): past the cap, new combinations
// are counted under `overflow` and the family stops growing (docs/decisions.md).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Counter, Histogram, Registry } from 'prom-client';
import { CappedCounter, CappedHistogram, COUNTER_CAP, HISTOGRAM_CAP, OVERFLOW } from './metrics.ts';

const seriesOf = (text: string, name: string) => text.split('\n').filter((l) => l.startsWith(`${name}{`));

test('a counter keeps 1000 label combinations and counts the rest under overflow', async () => {
  assert.equal(COUNTER_CAP, 1000);
  const registry = new Registry();
  const c = new CappedCounter(
    new Counter({ name: 'c_total', help: 'h', labelNames: ['a', 'b'] as const, registers: [registry] }),
  );
  for (let i = 0; i < COUNTER_CAP + 7; i++) c.inc({ a: `v${i}`, b: 'x' });
  c.inc({ a: 'v0', b: 'x' });
  const lines = seriesOf(await registry.metrics(), 'c_total');
  assert.equal(lines.length, COUNTER_CAP + 1);
  assert.ok(lines.includes(`c_total{a="${OVERFLOW}",b="${OVERFLOW}"} 7`));
  assert.ok(lines.includes('c_total{a="v0",b="x"} 2'), 'a combination seen before the cap keeps counting');
});

test('a histogram keeps 500 label combinations and observes the rest under overflow', async () => {
  assert.equal(HISTOGRAM_CAP, 500);
  const registry = new Registry();
  const h = new CappedHistogram(
    new Histogram({
      name: 'h_seconds',
      help: 'h',
      labelNames: ['route'] as const,
      buckets: [1],
      registers: [registry],
    }),
  );
  for (let i = 0; i < HISTOGRAM_CAP + 3; i++) h.observe({ route: `/r${i}` }, 0.5);
  const counts = seriesOf(await registry.metrics(), 'h_seconds_count');
  assert.equal(counts.length, HISTOGRAM_CAP + 1);
  assert.ok(counts.includes(`h_seconds_count{route="${OVERFLOW}"} 3`));
});
