// GET /session-events (document 1, realm API table, Errors and Limits; docs/resource-servers.md):
// who may read it, what a revocation puts in it, the long poll, the query's bad values, and the
// 410 a cursor gets once the events after it were pruned.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { pruneSessionEventsTask } from '../../../src/sessions/session-events-prune.task.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { readEvents, streamKit, streamReader } from './stream-kit.ts';

describe('session events › the stream', () => {
  test('case=only a caller holding realm.session_events.read reads it', async (t) => {
    const k = await streamKit(t);
    const bare = await streamReader(k.h, k.realm, []);
    const refused = await readEvents(k.h, k.realm, await bare.token());
    assert.equal(refused.status, 403);
    // An administrator's bad query is still refused first when the caller may not read.
    assert.equal((await readEvents(k.h, k.realm, await bare.token(), { wait: '99' })).status, 403);
    const person = await apiCaller(k.h, k.realm, { roles: [] });
    const res = await person.call('GET', '/session-events');
    assert.equal(res.status, 403);
    const account = await k.member();
    assert.equal((await account.call('GET', '/session-events')).status, 401);
    const allowed = await readEvents(k.h, k.realm, await k.reader.token());
    assert.equal(allowed.status, 200);
    assert.ok(Array.isArray(allowed.body.events));
    assert.equal(typeof allowed.body.next_cursor, 'string');
  });

  test('case=an ended session is an event, and the cursor moves past it', async (t) => {
    const k = await streamKit(t);
    const token = await k.reader.token();
    const start = await readEvents(k.h, k.realm, token);
    const member = await k.member();
    await k.endSession(member);
    const page = await readEvents(k.h, k.realm, token, { cursor: String(start.body.next_cursor) });
    assert.equal(page.status, 200);
    const ended = page.body.events?.find((e) => e.type === 'session_ended');
    assert.ok(ended, JSON.stringify(page.body));
    assert.equal(ended.session_id, member.sessionId);
    assert.equal(ended.user_id, member.userId);
    assert.match(String(ended.occurred_at), /^\d{4}-\d\d-\d\dT.*Z$/);
    const after = await readEvents(k.h, k.realm, token, { cursor: String(page.body.next_cursor) });
    assert.deepEqual(after.body.events, []);
    // Another realm's stream does not show it.
    const other = await k.h.createRealm();
    const stranger = await streamReader(k.h, other);
    const theirs = await readEvents(k.h, other, await stranger.token());
    assert.equal(
      theirs.body.events?.some((e) => e.session_id === member.sessionId),
      false,
    );
  });

  test('case=a long poll answers with the revocation that commits while it waits', async (t) => {
    const k = await streamKit(t);
    const token = await k.reader.token();
    const member = await k.member();
    const start = await readEvents(k.h, k.realm, token);
    const waiting = readEvents(k.h, k.realm, token, { cursor: String(start.body.next_cursor), wait: '25' });
    await k.endSession(member);
    const page = await waiting;
    assert.equal(page.status, 200);
    assert.ok(page.body.events?.some((e) => e.type === 'session_ended' && e.session_id === member.sessionId));
  });

  test('case=a revocation that rolls back leaves no event', async (t) => {
    const k = await streamKit(t);
    const token = await k.reader.token();
    const member = await k.member();
    const start = await readEvents(k.h, k.realm, token);
    await assert.rejects(
      k.h.ctx.db.tx(async (tx) => {
        await tx.query('update sessions set revoked_at = now() where realm_id = $1 and id = $2', [
          k.realm.id,
          member.sessionId,
        ]);
        throw new Error('rolled back');
      }),
      /rolled back/,
    );
    const page = await readEvents(k.h, k.realm, token, { cursor: String(start.body.next_cursor) });
    assert.deepEqual(page.body.events, []);
  });

  test('case=bad wait and cursor values are 400 invalid_request', async (t) => {
    const k = await streamKit(t);
    const token = await k.reader.token();
    const other = await k.h.createRealm();
    const foreign = await readEvents(k.h, other, await (await streamReader(k.h, other)).token());
    const bad: Record<string, string>[] = [
      { wait: '26' },
      { wait: '-1' },
      { wait: '1.5' },
      { wait: 'soon' },
      { wait: '' },
      { cursor: 'not-a-cursor' },
      { cursor: String(foreign.body.next_cursor) },
      { limit: '10' },
    ];
    for (const query of bad) {
      const r = await readEvents(k.h, k.realm, token, query);
      assert.equal(r.status, 400, JSON.stringify(query));
      assert.equal(r.body.code, 'invalid_request', JSON.stringify(query));
    }
    assert.equal((await readEvents(k.h, k.realm, token, { wait: '0' })).status, 200);
  });

  test('case=a cursor whose events were pruned after 7 days answers 410 cursor_expired', async (t) => {
    const k = await streamKit(t);
    const token = await k.reader.token();
    const start = await readEvents(k.h, k.realm, token);
    await k.endSession(await k.member());
    k.h.clock.advance(8 * 24 * 3600 * 1000);
    const report = await pruneSessionEventsTask({ db: k.h.ctx.db }, k.h.clock.now());
    assert.ok((report.pruned ?? 0) >= 1);
    const fresh = await k.reader.token();
    const expired = await readEvents(k.h, k.realm, fresh, { cursor: String(start.body.next_cursor) });
    assert.equal(expired.status, 410);
    assert.equal(expired.body.code, 'cursor_expired');
    // Starting over without a cursor works, and its cursor is good.
    const again = await readEvents(k.h, k.realm, fresh);
    assert.equal(again.status, 200);
    assert.equal(
      (await readEvents(k.h, k.realm, fresh, { cursor: String(again.body.next_cursor) })).status,
      200,
    );
  });
});
