// The hook administration API (docs/hooks.md): the secret shown once and stored sealed, reads,
// partial changes with If-Match, deletion, secret rotation, validation and permissions.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { json } from '../webhooks/webhook-kit.ts';
import { createHook, hookSetup, type Json, receiverUrl } from './hooks-kit.ts';

const fieldsOf = (body: Json) =>
  ((body.errors ?? []) as { field: string; code: string }[]).map((e) => `${e.field}:${e.code}`);

describe('hooks › administration API', () => {
  test('case=create answers the secret once; reads never show it; it is stored sealed', async (t) => {
    const s = await hookSetup(t);
    const url = receiverUrl(s.receiver);
    const created = await createHook(s.admin, { kind: 'before_token_issuance', url });
    assert.match(String(created.id), /^hok_[0-9a-z]{26}$/);
    assert.match(String(created.signing_secret), /^whsec_[A-Za-z0-9+/]{43}=$/);
    const { id: _id, signing_secret: _s, created_at, updated_at, ...rest } = created;
    assert.ok(created_at && updated_at);
    assert.deepEqual(rest, {
      name: 'test hook',
      kind: 'before_token_issuance',
      url,
      timeout_ms: 2000,
      failure_mode: 'fail_open',
      client_ids: ['web-app'],
      allow_private_network: true,
      state: 'active',
      owner_user_id: s.admin.userId,
    });
    const got = await s.admin.call('GET', `/hooks/${created.id}`);
    assert.equal(got.headers.get('etag'), '"1"');
    assert.equal('signing_secret' in (await json(got)), false);
    const list = await json(await s.admin.call('GET', '/hooks'));
    assert.deepEqual(
      (list.items as Json[]).map((h) => [h.id, 'signing_secret' in h]),
      [[created.id, false]],
    );
    const [row] = (
      await s.h.ctx.db.query<{ secret_sealed: string }>('select secret_sealed from hooks where id = $1', [
        created.id,
      ])
    ).rows;
    assert.match(row!.secret_sealed, /^pa1\./);
    assert.equal(row!.secret_sealed.includes(String(created.signing_secret).slice(6, 20)), false);
  });

  test('case=PATCH changes members under If-Match; kind is fixed; DELETE removes; rotate gives a new secret', async (t) => {
    const s = await hookSetup(t);
    const h = await createHook(s.admin, { kind: 'after_sign_in', url: receiverUrl(s.receiver) });
    const path = `/hooks/${h.id}`;
    const stale = await s.admin.call('PATCH', path, { timeout_ms: 500 }, { 'if-match': '"7"' });
    assert.equal(stale.status, 412);
    const patched = await s.admin.call(
      'PATCH',
      path,
      { timeout_ms: 500, failure_mode: 'fail_closed' },
      {
        'if-match': '"1"',
      },
    );
    assert.equal(patched.status, 200);
    assert.equal(patched.headers.get('etag'), '"2"');
    const body = await json(patched);
    assert.deepEqual([body.timeout_ms, body.failure_mode, body.kind], [500, 'fail_closed', 'after_sign_in']);
    const kind = await s.admin.call('PATCH', path, { kind: 'before_registration' });
    assert.equal(kind.status, 400);
    assert.deepEqual(fieldsOf(await json(kind)), ['kind:immutable']);

    const rotated = await s.admin.call('POST', `${path}/rotate-secret`);
    assert.equal(rotated.status, 200);
    const r = await json(rotated);
    assert.notEqual(r.signing_secret, h.signing_secret);
    assert.ok(r.previous_secret_expires_at);

    assert.equal((await s.admin.call('DELETE', path)).status, 204);
    assert.equal((await s.admin.call('GET', path)).status, 404);
    assert.equal((await s.admin.call('DELETE', path)).status, 404);
    const audit = await s.h.ctx.db.query<{ type: string }>(
      'select type from audit_events where realm_id = $1 and target_id = $2 order by occurred_at, id',
      [s.realm.id, h.id],
    );
    assert.deepEqual(
      audit.rows.map((a) => a.type).sort(),
      ['hook.created', 'hook.deleted', 'hook.secret_rotated', 'hook.updated'].sort(),
    );
  });

  test('case=validation: 422 naming the member; 400 for unknown members', async (t) => {
    const s = await hookSetup(t);
    const url = receiverUrl(s.receiver);
    const base = { name: 'x', kind: 'after_sign_in', url, allow_private_network: true };
    const cases: [Json, number, string[]][] = [
      [{ ...base, timeout_ms: 99 }, 422, ['timeout_ms:too_small']],
      [{ ...base, timeout_ms: 5001 }, 422, ['timeout_ms:too_large']],
      [{ ...base, failure_mode: 'maybe' }, 422, ['failure_mode:not_allowed']],
      [{ ...base, kind: 'before_logout' }, 422, ['kind:not_allowed']],
      [{ ...base, url: 'ftp://127.0.0.1/x' }, 422, ['url:invalid_url']],
      // A private address without allow_private_network is refused by the egress guard.
      [{ ...base, allow_private_network: false }, 422, ['url:egress_denied']],
      [{ ...base, client_ids: ['a', 'a'] }, 422, ['client_ids[1]:duplicate']],
      [{ ...base, signing_secret: 'whsec_x' }, 400, ['signing_secret:unknown_member']],
    ];
    for (const [body, status, fields] of cases) {
      const res = await s.admin.call('POST', '/hooks', body);
      const answer = await json(res);
      assert.equal(res.status, status, JSON.stringify([body, answer]));
      assert.deepEqual(fieldsOf(answer), fields, JSON.stringify(body));
    }
    assert.deepEqual((await json(await s.admin.call('GET', '/hooks'))).items, []);
  });

  test('case=reads need realm.hooks.read and changes realm.hooks.write', async (t) => {
    const s = await hookSetup(t);
    const plain = await apiCaller(s.h, s.realm, { roles: [] });
    assert.equal((await plain.call('GET', '/hooks')).status, 403);
    const res = await plain.call('POST', '/hooks', {
      name: 'x',
      kind: 'after_sign_in',
      url: receiverUrl(s.receiver),
      allow_private_network: true,
    });
    assert.equal(res.status, 403);
  });
});
