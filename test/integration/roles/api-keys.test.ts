// API keys (docs/api-keys.md): issued once to a service principal, kept as digests, expiring,
// revocable, rate limited, usable as a bearer of the administration API, never in a realm export.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { spendBudgets } from '../../../src/platform/abuse-budget.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import type { Harness } from '../../harness/harness.ts';
import { audits, events, movableClock, rows } from '../../harness/signin-kit.ts';
import { download, requestExport, runJobs } from '../exports/exports-kit.ts';
import { assign, type Body, createRole, type Reply, send, setup } from './roles-kit.ts';

const KEY = /^pa_ak_[0-9a-z]{26}_[A-Za-z0-9_-]{43}$/;

async function withKey(
  h: Harness,
  realm: RealmRow,
  key: string,
  method: string,
  path: string,
  body?: unknown,
) {
  const res = await h.get(`/api/v1/realms/${realm.name}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers } as Reply;
}

/** A principal holding only realm.service_principals.read, and one key of it. */
async function principalWithKey(s: Awaited<ReturnType<typeof setup>>, extra: Record<string, unknown> = {}) {
  const p = await s.api('POST', '/service-principals', { name: 'Provisioner' });
  const reader = await createRole(s.admin, {
    name: `sp-reader-${p.body.id.slice(-6)}`,
    permissions: ['realm.service_principals.read'],
  });
  assert.equal((await assign(s.admin, reader, { type: 'service_principal', id: p.body.id })).status, 201);
  const created = await s.api('POST', '/api-keys', { service_principal_id: p.body.id, name: 'ci', ...extra });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return { principalId: p.body.id as string, created };
}

describe('API keys', () => {
  test('case=issued once, listed without the key, acts as its principal, revoked with DELETE', async (t) => {
    const s = await setup(t);
    const { h, realm, api } = s;
    const { principalId, created } = await principalWithKey(s);
    assert.match(created.body.key, KEY);
    assert.equal(created.headers.get('cache-control'), 'no-store');
    assert.match(created.body.id, /^apk_[0-9a-z]{26}$/);
    assert.deepEqual(
      [created.body.service_principal_id, created.body.name, created.body.state, created.body.revoked_at],
      [principalId, 'ci', 'active', null],
    );
    const days = (Date.parse(created.body.expires_at) - Date.parse(created.body.created_at)) / 86_400_000;
    assert.equal(days, 90);

    const listed = await api('GET', `/api-keys?service_principal_id=${principalId}`);
    assert.equal(listed.status, 200);
    assert.deepEqual(
      listed.body.items.map((k: Body) => [k.id, k.key]),
      [[created.body.id, undefined]],
    );
    // Only a digest is stored.
    const [stored] = await rows(h, 'select * from api_keys where id = $1', [created.body.id]);
    assert.ok(stored && !JSON.stringify(stored).includes(created.body.key.slice(-43)));

    const key = created.body.key as string;
    assert.equal((await withKey(h, realm, key, 'GET', '/service-principals')).status, 200);
    const denied = await withKey(h, realm, key, 'POST', '/service-principals', { name: 'x' });
    assert.deepEqual([denied.status, denied.body.code], [403, 'forbidden']);
    // Keys serve the administration API only.
    assert.equal((await withKey(h, realm, key, 'GET', '/me/sessions')).status, 401);
    const wrong = `${key.slice(0, -4)}AAAA`;
    assert.equal((await withKey(h, realm, wrong, 'GET', '/service-principals')).status, 401);

    const [audit] = await audits(h, realm, 'api_key.created');
    assert.deepEqual([audit?.signal, audit?.target_id], ['credential_issued', principalId]);
    assert.ok(!JSON.stringify(audit).includes(key));
    const alerts = await events(h, realm, 'security.alert');
    assert.ok(alerts.some((e) => JSON.stringify(e.data).includes('api_key.created')));

    assert.equal((await api('DELETE', `/api-keys/${created.body.id}`)).status, 204);
    assert.equal((await withKey(h, realm, key, 'GET', '/service-principals')).status, 401);
    assert.equal((await api('DELETE', `/api-keys/${created.body.id}`)).status, 204);
    assert.equal((await audits(h, realm, 'api_key.revoked')).length, 1);
    assert.equal((await api('DELETE', '/api-keys/apk_00000000000000000000000000')).status, 404);
    const revoked = await api('GET', '/api-keys?state=revoked');
    assert.deepEqual(
      revoked.body.items.map((k: Body) => k.state),
      ['revoked'],
    );
  });

  test('case=bad input answers 400 or 422; a principal holds at most 10 live keys', async (t) => {
    const s = await setup(t);
    const p = await s.api('POST', '/service-principals', { name: 'Many' });
    const post = (b: Record<string, unknown>) =>
      s.api('POST', '/api-keys', { service_principal_id: p.body.id, name: 'k', ...b });
    assert.equal((await post({ extra: 1 })).status, 400);
    assert.equal((await post({ name: '' })).status, 422);
    const past = await post({ expires_at: '2000-01-01T00:00:00Z' });
    assert.deepEqual([past.status, past.body.errors[0].code], [422, 'not_in_future']);
    const far = new Date(Date.now() + 400 * 86_400_000).toISOString();
    assert.deepEqual([(await post({ expires_at: far })).status], [422]);
    const unknown = await post({ service_principal_id: 'spr_missing' });
    assert.deepEqual([unknown.status, unknown.body.errors[0].code], [422, 'unknown_service_principal']);
    for (let i = 0; i < 10; i++) assert.equal((await post({ name: `k${i}` })).status, 201);
    assert.deepEqual([(await post({})).status, (await post({})).body.code], [409, 'conflict']);
    assert.equal((await s.api('GET', '/api-keys?state=bogus')).status, 400);
  });

  test('case=an expired key, a disabled or deleted principal, and a spent budget stop the key', async (t) => {
    const clock = movableClock();
    const s = await setup(t, clock);
    const { h, realm, api } = s;
    const soon = new Date(clock.now().getTime() + 86_400_000).toISOString();
    const { principalId, created } = await principalWithKey(s, { expires_at: soon });
    const key = created.body.key as string;
    const path = '/service-principals';

    await spendBudgets(
      h.ctx.db,
      [{ bucket: `api_key:${realm.id}:${created.body.id}`, limit: 600, windowMs: 60_000 }],
      clock.now(),
      600,
    );
    const limited = await withKey(h, realm, key, 'GET', path);
    assert.deepEqual([limited.status, limited.body.code], [429, 'rate_limited']);
    assert.ok(Number(limited.headers.get('retry-after')) >= 1);
    clock.advance(61_000);
    assert.equal((await withKey(h, realm, key, 'GET', path)).status, 200);

    assert.equal((await api('POST', `/service-principals/${principalId}/disable`)).status, 200);
    assert.equal((await withKey(h, realm, key, 'GET', path)).status, 401);
    assert.equal((await api('POST', `/service-principals/${principalId}/enable`)).status, 200);
    assert.equal((await withKey(h, realm, key, 'GET', path)).status, 200);

    // A deleted principal's keys are revoked with it.
    const other = await api('POST', '/service-principals', { name: 'Gone' });
    const second = await api('POST', '/api-keys', { service_principal_id: other.body.id, name: 'second' });
    assert.equal((await api('DELETE', `/service-principals/${other.body.id}`)).status, 204);
    assert.equal((await withKey(h, realm, second.body.key, 'GET', path)).status, 401);
    const [row] = await rows(h, 'select revoked_at from api_keys where id = $1', [second.body.id]);
    assert.ok(row?.revoked_at);

    clock.advance(2 * 86_400_000);
    assert.equal((await withKey(h, realm, key, 'GET', path)).status, 401);
    // The first administrator's sign-in expired with the clock's move; a new one lists.
    const later = await apiCaller(h, realm);
    const expired = await send(later, 'GET', '/api-keys?state=expired');
    assert.deepEqual(
      expired.body.items.map((k: Body) => k.id),
      [created.body.id],
    );
  });

  test('case=the realm export carries no API key', async (t) => {
    const s = await setup(t);
    const { created } = await principalWithKey(s);
    const exportSetup = { ...s, clock: movableClock() };
    const jobId = await requestExport(s.admin, '/data-exports', '');
    assert.deepEqual(await runJobs(exportSetup), { succeeded: 1 });
    const file = await download(s.admin, jobId);
    assert.ok(file.text.includes('"service_principal"'));
    assert.ok(!file.text.includes(created.body.id));
    assert.ok(!file.text.includes(created.body.key.slice(-43)));
    assert.ok(!file.text.includes('pa_ak_'));
  });
});
