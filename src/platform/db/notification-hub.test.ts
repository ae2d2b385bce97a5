// The process-wide LISTEN of the session-event long poll: a notification wakes the waiters of its
// key only, a broken listening connection ends every wait with the fault (the route answers 503),
// the next waiter listens again, and closing the hub releases every waiter at once.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Db } from './db.ts';
import { NotificationHub } from './notification-hub.ts';

interface Listening {
  notify: (payload: string) => void;
  lose: (e: Error) => void;
  stopped: boolean;
}

function fakeDb() {
  const sessions: Listening[] = [];
  const db = {
    kind: 'postgres',
    async listen(_channel: string, onNotify: (p: string) => void, onLoss: (e: Error) => void) {
      const l: Listening = { notify: onNotify, lose: onLoss, stopped: false };
      sessions.push(l);
      return async () => {
        l.stopped = true;
      };
    },
  } as unknown as Db;
  return { db, sessions };
}

const HOUR = 3_600_000;

describe('platform › notification hub', () => {
  test('case=a notification wakes the waiters of its key and no others', async () => {
    const { db, sessions } = fakeDb();
    const hub = new NotificationHub(db, 'chan');
    const a = await hub.watch('realm-a');
    const b = await hub.watch('realm-b');
    assert.equal(sessions.length, 1, 'one LISTEN for every waiter');
    const woken = a.next(HOUR);
    sessions[0]?.notify('realm-a');
    assert.equal(await woken, 'notified');
    assert.equal(await b.next(0), 'timeout');
    // A notification between two waits is not lost.
    sessions[0]?.notify('realm-b');
    assert.equal(await b.next(HOUR), 'notified');
    a.end();
    b.end();
    await hub.close();
    assert.equal(sessions[0]?.stopped, true);
  });

  test('case=a lost connection ends the wait with its fault and the next waiter listens again', async () => {
    const { db, sessions } = fakeDb();
    const hub = new NotificationHub(db, 'chan');
    const w = await hub.watch('realm-a');
    const waiting = w.next(HOUR);
    const fault = new Error('connection reset');
    sessions[0]?.lose(fault);
    await assert.rejects(waiting, (e) => e === fault);
    w.end();
    const again = await hub.watch('realm-a');
    assert.equal(sessions.length, 2);
    const woken = again.next(HOUR);
    sessions[1]?.notify('realm-a');
    assert.equal(await woken, 'notified');
    again.end();
    await hub.close();
  });

  test('case=closing the hub or aborting the request releases the wait', async () => {
    const { db } = fakeDb();
    const hub = new NotificationHub(db, 'chan');
    const w = await hub.watch('realm-a');
    const gone = new AbortController();
    const aborted = w.next(HOUR, gone.signal);
    gone.abort();
    assert.equal(await aborted, 'closed');
    const waiting = w.next(HOUR);
    await hub.close();
    assert.equal(await waiting, 'closed');
    await assert.rejects(hub.watch('realm-a'));
  });

  test('case=a database that cannot listen refuses the watch', async () => {
    const hub = new NotificationHub({ kind: 'postgres' } as unknown as Db, 'chan');
    await assert.rejects(hub.watch('realm-a'), /cannot listen/);
  });
});
