// Maintenance mode (spec doc 2, Operator status object; Errors 503; docs/operations.md): what each
// mode refuses with 503 and Retry-After, what it always serves, and the `maintenance` member of
// GET /status. The mode is one row for the whole database, so each test turns it off again.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, type TestContext, test } from 'node:test';
import { OPERATOR_ACTOR } from '../../../src/audit/audit.types.ts';
import { type MaintenanceChange, refuses, setMaintenance } from '../../../src/ops/maintenance.ts';
import { createLogger } from '../../../src/platform/log.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { oauthPost, seedServiceClient } from '../../harness/token-kit.ts';

const OFF: MaintenanceChange = {
  mode: 'off',
  message: null,
  retryAfterSeconds: null,
  debugUntil: null,
  debugComponent: null,
};

async function setMode(h: Harness, change: Partial<MaintenanceChange>): Promise<void> {
  await setMaintenance(h.ctx.db, { ...OFF, ...change }, OPERATOR_ACTOR, 'ops-oncall', h.clock.now());
  h.ctx.maintenance.forget();
}

async function harness(t: TestContext): Promise<Harness> {
  const h = await startHarness(t);
  t.after(() => setMode(h, OFF));
  return h;
}

async function status(h: Harness): Promise<Record<string, unknown>> {
  const r = await h.internal('/status');
  assert.equal(r.status, 200);
  return (await r.json()) as Record<string, unknown>;
}

describe('ops › maintenance mode', () => {
  test('case=closed refuses every request but health, key set and discovery, with Retry-After', async (t) => {
    const h = await harness(t);
    const realm = await h.createRealm();
    await setMode(h, { mode: 'closed', message: 'database upgrade', retryAfterSeconds: 120 });

    const admin = await h.get(`/api/v1/realms/${realm.name}/users`);
    assert.equal(admin.status, 503);
    assert.equal(admin.headers.get('retry-after'), '120');
    const body = (await admin.json()) as Record<string, unknown>;
    assert.equal(body.code, 'temporarily_unavailable');
    assert.equal(body.detail, 'database upgrade');

    const svc = await seedServiceClient(h, realm, 'billing');
    const token = await oauthPost(h, realm, 'token', { grant_type: 'client_credentials' }, svc.creds);
    assert.deepEqual([token.status, token.body.error], [503, 'temporarily_unavailable']);
    assert.equal(token.headers.get('retry-after'), '120');

    for (const path of [
      '/health/live',
      `/realms/${realm.name}/jwks`,
      `/realms/${realm.name}/.well-known/openid-configuration`,
    ]) {
      assert.equal((await h.get(path)).status, 200, path);
    }
    const s = await status(h);
    assert.equal(s.status, 'maintenance');
    assert.deepEqual(s.maintenance, {
      mode: 'closed',
      message: 'database upgrade',
      retry_after_seconds: 120,
      updated_at: (s.maintenance as { updated_at: string }).updated_at,
      updated_by: 'ops-oncall',
      debug_until: null,
      debug_component: null,
    });

    await setMode(h, OFF);
    assert.equal((await h.get(`/api/v1/realms/${realm.name}/users`)).status, 401, 'served again');
    const after = await status(h);
    assert.notEqual(after.status, 'maintenance');
    assert.equal((after.maintenance as { mode: string }).mode, 'off');
  });

  test('case=read_only refuses writes only; no Retry-After when the mode names no wait', async (t) => {
    const h = await harness(t);
    const realm = await h.createRealm();
    const svc = await seedServiceClient(h, realm, 'billing');
    await setMode(h, { mode: 'read_only' });
    const token = await oauthPost(h, realm, 'token', { grant_type: 'client_credentials' }, svc.creds);
    assert.equal(token.status, 503);
    assert.equal(token.headers.get('retry-after'), null);
    // Reads go on: introspection answers (inactive for garbage), a GET reaches authentication.
    const introspect = await oauthPost(h, realm, 'introspect', { token: 'x' }, svc.creds);
    assert.notEqual(introspect.status, 503);
    assert.equal((await h.get(`/api/v1/realms/${realm.name}/users`)).status, 401);
  });

  test('case=debug serves everything and lapses at debug_until', async (t) => {
    const h = await harness(t);
    await setMode(h, {
      mode: 'debug',
      debugUntil: new Date(h.clock.now().getTime() + 60_000),
      debugComponent: 'oauth',
    });
    const s = await status(h);
    assert.equal(s.status, 'maintenance');
    assert.equal((s.maintenance as { debug_component: string }).debug_component, 'oauth');
    assert.equal(h.ctx.log.level, 'silent', 'a silenced test logger stays silent');
    h.clock.advance(61_000);
    const lapsed = await status(h);
    assert.notEqual(lapsed.status, 'maintenance');
    assert.equal((lapsed.maintenance as { mode: string }).mode, 'off');
  });

  test('case=a debug window lowers the log level to debug and gives it back', async (t) => {
    const sink = new Writable({ write: (_chunk, _enc, done) => done() });
    const h = await startHarness(t, { log: createLogger('info', sink) });
    t.after(() => setMode(h, OFF));
    await setMode(h, { mode: 'debug', debugUntil: new Date(h.clock.now().getTime() + 60_000) });
    await h.get('/health/live');
    assert.equal(h.ctx.log.level, 'debug');
    h.clock.advance(61_000);
    await h.get('/health/live');
    assert.equal(h.ctx.log.level, 'info');
  });

  test('case=the rule table', () => {
    const cases: [Parameters<typeof refuses>[0], string, string, boolean][] = [
      ['off', 'POST', '/realms/r/oauth/token', false],
      ['debug', 'POST', '/realms/r/oauth/token', false],
      ['read_only', 'POST', '/realms/r/oauth/token', true],
      ['read_only', 'POST', '/realms/r/oauth/introspect', false],
      ['read_only', 'POST', '/realms/r/oauth/userinfo', false],
      ['read_only', 'GET', '/api/v1/realms/r/users', false],
      ['read_only', 'DELETE', '/api/v1/realms/r/users/u', true],
      ['closed', 'GET', '/api/v1/realms/r/users', true],
      ['closed', 'GET', '/health/ready', false],
      ['closed', 'GET', '/realms/r/jwks', false],
    ];
    for (const [mode, method, path, refused] of cases)
      assert.equal(refuses(mode, method, path), refused, `${mode} ${method} ${path}`);
  });
});
