// Two worker processes, played by two schedulers with different lease holders over one database.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import type { Task } from '../../../src/kernel/task.ts';
import { Scheduler, takeLease } from '../../../src/main/worker/scheduler.ts';
import { createLogger } from '../../../src/platform/log.ts';
import { fileDatabase, RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';
import { MINUTE, SECOND, TestClock } from '../keys/key-helpers.ts';

type Outcome = 'success' | 'failure' | 'skipped';

function countingTask(intervalMs = MINUTE) {
  const runs: { holder: string; at: number }[] = [];
  const task = (holder: string): Task<unknown> => ({
    name: `test.${randomBytes(4).toString('hex')}`,
    intervalMs,
    run: async (_deps, now) => {
      runs.push({ holder, at: now.getTime() });
      return { ran: 1 };
    },
  });
  return { runs, task };
}

async function twoWorkers() {
  const db = await fileDatabase();
  const clock = new TestClock(Date.UTC(2032, 5, 1));
  const outcomes: Record<string, Outcome[]> = { a: [], b: [] };
  const log = createLogger('silent');
  const make = (holder: 'a' | 'b', tasks: Task<unknown>[]) =>
    new Scheduler(
      db,
      {},
      tasks,
      () => clock.now(),
      log,
      { onRun: (_task, outcome) => outcomes[holder]?.push(outcome) },
      `holder-${holder}-${randomBytes(3).toString('hex')}`,
    );
  return { db, clock, outcomes, make };
}

describe('worker › scheduler leases', () => {
  test('case=of two workers only one runs a task in each interval', {
    skip: RACE_NEEDS_POSTGRES,
  }, async () => {
    const { clock, outcomes, make } = await twoWorkers();
    const { runs, task } = countingTask();
    // Both schedulers run the same task definition (same name), as two processes would.
    const shared = task('shared');
    const a = make('a', [shared]);
    const b = make('b', [shared]);

    const first = await Promise.all([a.runOnce(shared), b.runOnce(shared)]);
    assert.equal(runs.length, 1, 'one run in the first interval');
    assert.equal(first.filter((r) => r !== null).length, 1);
    assert.deepEqual([...outcomes.a!, ...outcomes.b!].sort(), ['skipped', 'success']);
    const winner = outcomes.a![0] === 'success' ? a : b;
    const loser = winner === a ? b : a;

    clock.advance(MINUTE - SECOND);
    assert.equal(await loser.runOnce(shared), null, 'the lease still belongs to the other worker');
    assert.equal(runs.length, 1);

    clock.advance(SECOND);
    assert.deepEqual(await loser.runOnce(shared), { ran: 1 }, 'the expired lease is taken over');
    assert.equal(runs.length, 2);
    assert.equal(await winner.runOnce(shared), null, 'and now the first worker waits');
    assert.equal(runs.length, 2);
  });

  test('case=a lease is renewed by its holder and refused to others until it expires', async () => {
    const db = await fileDatabase();
    const name = `test.${randomBytes(4).toString('hex')}`;
    const t0 = Date.UTC(2032, 6, 1);
    const at = (s: number) => new Date(t0 + s * SECOND);
    assert.equal(await takeLease(db, name, 'x', at(0), at(60)), true);
    assert.equal(await takeLease(db, name, 'y', at(1), at(61)), false);
    assert.equal(await takeLease(db, name, 'x', at(30), at(90)), true, 'renewed by its holder');
    assert.equal(await takeLease(db, name, 'y', at(60), at(120)), false, 'the renewal moved the end');
    assert.equal(await takeLease(db, name, 'y', at(90), at(150)), true);
    const row = await db.query<{ holder: string; locked_until: Date }>(
      'select holder, locked_until from worker_leases where name = $1',
      [name],
    );
    assert.equal(row.rows[0]?.holder, 'y');
    assert.equal(new Date(row.rows[0]!.locked_until).getTime(), at(150).getTime());
  });

  test('case=each task runs again when its interval has passed on the clock, not before', async () => {
    const { clock, make } = await twoWorkers();
    const { runs, task } = countingTask(MINUTE);
    const t = task('a');
    const a = make('a', [t]);
    await a.tick();
    assert.equal(runs.length, 1, 'the first tick runs every task');
    clock.advance(MINUTE - SECOND);
    await a.tick();
    assert.equal(runs.length, 1, 'not before its interval');
    clock.advance(SECOND);
    await a.tick();
    assert.equal(runs.length, 2, 'a minute on the clock later');
    clock.advance(-10 * MINUTE);
    await a.tick();
    assert.equal(runs.length, 3, 'a clock set back does not silence the task');
    await a.stop();
    clock.advance(MINUTE);
    await a.tick();
    assert.equal(runs.length, 3, 'a stopped scheduler runs nothing');
  });

  test('case=a failing task is reported as a failure instead of throwing', async () => {
    const { outcomes, make } = await twoWorkers();
    const failing: Task<unknown> = {
      name: `test.${randomBytes(4).toString('hex')}`,
      intervalMs: MINUTE,
      run: async () => {
        throw new Error('boom');
      },
    };
    const a = make('a', [failing]);
    assert.equal(await a.runOnce(failing), null);
    assert.deepEqual(outcomes.a, ['failure']);
  });
});
