// Request handling of check and check-batch: strict JSON (400), semantically invalid members
// (INVALID_REQUEST), batch limits and per-item answers.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkBody, decisionKit } from './decision-kit.ts';

describe('decisions › requests', () => {
  test('case=shape errors are 400 invalid_request, meaning errors are INVALID_REQUEST decisions', async (t) => {
    const k = await decisionKit(t);
    const { token } = await k.subject();
    const unknown = await k.check({ ...checkBody(token, 'a.b'), extra: 1 });
    assert.deepEqual([unknown.status, unknown.body.code], [400, 'invalid_request']);
    const unknownInResource = await k.check(
      checkBody(token, 'a.b', { type: 'document', id: 'x', owner: 'y' }),
    );
    assert.deepEqual([unknownInResource.status, unknownInResource.body.code], [400, 'invalid_request']);
    const syntax = await k.caller.call('POST', '/authorization/check', '{"subject_token": ', {
      'content-type': 'application/json',
    });
    assert.equal(syntax.status, 400);
    const duplicate = await k.caller.call('POST', '/authorization/check', '{"action":"a","action":"b"}', {
      'content-type': 'application/json',
    });
    assert.equal(duplicate.status, 400);
    const form = await k.caller.call('POST', '/authorization/check', 'action=a', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    assert.equal(form.status, 415);

    const invalid = async (body: unknown) => {
      const r = await k.check(body);
      assert.equal(r.status, 200, JSON.stringify(body));
      assert.deepEqual(
        [r.body.allowed, r.body.reason_code, r.body.cache_ttl_seconds],
        [false, 'INVALID_REQUEST', 0],
      );
      assert.match(String(r.body.decision_id), /^dec_/);
    };
    await invalid({ subject_token: token, resource: { type: 'document', id: 'x' } });
    await invalid(checkBody(token, 'a.b', { type: 'document', id: 42 }));
    await invalid(checkBody(token, 'a.b', { type: 'document', id: 'x', org_id: ['o'] }));
    await invalid({ subject_token: 7, action: 'a.b', resource: { type: 'document' } });
    await invalid({ subject_token: token, action: 'a.b' });
    await invalid({ subject_token: token, action: 'has space', resource: { type: 'document' } });
    await invalid({ ...checkBody(token, 'a.b'), context: 'not an object' });
  });

  test('case=a batch answers each check on its own, in order', async (t) => {
    const k = await decisionKit(t);
    const role = await k.role('editor', ['documents.edit']);
    const { userId, token } = await k.subject();
    await k.assign(role, { type: 'user', id: userId });
    const r = await k.post('/authorization/check-batch', {
      checks: [
        checkBody(token, 'documents.edit'),
        checkBody(token, 'documents.delete'),
        { subject_token: token, action: 5, resource: { type: 'document' } },
        'not an object',
        checkBody('garbage', 'documents.edit'),
      ],
    });
    assert.equal(r.status, 200);
    const codes = (r.body.results as { reason_code: string }[]).map((x) => x.reason_code);
    assert.deepEqual(codes, [
      'ALLOWED',
      'NOT_PERMITTED',
      'INVALID_REQUEST',
      'INVALID_REQUEST',
      'SUBJECT_TOKEN_INACTIVE',
    ]);
    const ids = new Set((r.body.results as { decision_id: string }[]).map((x) => x.decision_id));
    assert.equal(ids.size, 5);
  });

  test('case=a batch holds 1 to 100 checks', async (t) => {
    const k = await decisionKit(t);
    const role = await k.role('editor', ['documents.edit']);
    const { userId, token } = await k.subject();
    await k.assign(role, { type: 'user', id: userId });
    const hundred = Array.from({ length: 100 }, (_, i) =>
      checkBody(token, i % 2 === 0 ? 'documents.edit' : 'documents.delete', {
        type: 'document',
        id: `d${i}`,
      }),
    );
    const ok = await k.post('/authorization/check-batch', { checks: hundred });
    assert.equal(ok.status, 200);
    const results = ok.body.results as { reason_code: string }[];
    assert.equal(results.length, 100);
    assert.equal(results.filter((x) => x.reason_code === 'ALLOWED').length, 50);
    for (const checks of [[], [...hundred, hundred[0]]]) {
      const refused = await k.post('/authorization/check-batch', { checks });
      assert.deepEqual([refused.status, refused.body.code], [422, 'validation_failed']);
      assert.match(String(refused.body.detail), /1 to 100/);
    }
  });
});

describe('decisions › caller and cost', () => {
  test('case=a caller without realm.authorization.check gets 403 even for a malformed body', async (t) => {
    const k = await decisionKit(t, { callerRoles: [] });
    const { token } = await k.subject();
    const unknownMember = await k.check({ ...checkBody(token, 'a.b'), extra: 1 });
    assert.equal(unknownMember.status, 403);
    const badBatch = await k.post('/authorization/check-batch', { checks: [] });
    assert.equal(badBatch.status, 403);
    const fine = await k.check(checkBody(token, 'a.b'));
    assert.equal(fine.status, 403);
  });

  test('case=a batch of opaque subject tokens reads their stored claims in one statement', async (t) => {
    const k = await decisionKit(t);
    const role = await k.role('editor', ['documents.edit']);
    const tokens: string[] = [];
    for (let i = 0; i < 5; i++) {
      const s = await k.subject({ opaque: true });
      await k.assign(role, { type: 'user', id: s.userId });
      tokens.push(s.token);
    }
    const db = k.h.ctx.db;
    const query = db.query.bind(db);
    let opaqueLookups = 0;
    (db as { query: typeof db.query }).query = (sql, params) => {
      if (sql.includes('opaque_access_tokens')) opaqueLookups++;
      return query(sql, params);
    };
    t.after(() => {
      (db as { query: typeof db.query }).query = query;
    });
    const r = await k.post('/authorization/check-batch', {
      checks: [
        ...tokens.map((tk) => checkBody(tk, 'documents.edit')),
        checkBody('pa_at_unknown', 'documents.edit'),
      ],
    });
    const codes = (r.body.results as { reason_code: string }[]).map((x) => x.reason_code);
    assert.deepEqual(codes, [...tokens.map(() => 'ALLOWED'), 'SUBJECT_TOKEN_INACTIVE']);
    assert.equal(opaqueLookups, 1);
  });
});
