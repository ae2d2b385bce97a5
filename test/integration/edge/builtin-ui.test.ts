// The built-in login UI on the public listener (docs/login-ui.md): served only when enabled, only
// the built files, with their content types, a strict Content-Security-Policy and revalidation;
// a realm without a login UI of its own uses it; the account page's client and its migration.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { accountAudience } from '../../../src/kernel/audiences.ts';
import { de } from '../../../ui/lib/messages.de.ts';
import { en } from '../../../ui/lib/messages.en.ts';
import { startHarness } from '../../harness/harness.ts';
import { startUiHarness } from '../../harness/login-ui-kit.ts';
import { authorizeQuery } from '../../harness/signin-kit.ts';

/** A GET with the path exactly as written (fetch would resolve dot segments first). */
function rawGet(base: string, path: string): Promise<{ status: number; headers: Record<string, unknown> }> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path, method: 'GET' }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('built-in login UI serving', () => {
  test('case=pages, scripts and styles with their types, CSP and revalidation', async (t) => {
    const h = await startUiHarness(t);
    const page = await h.get('/ui/login/?transaction_id=x&realm=y');
    assert.equal(page.status, 200);
    assert.equal(page.headers.get('content-type'), 'text/html; charset=utf-8');
    const csp = page.headers.get('content-security-policy') ?? '';
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    assert.equal(page.headers.get('cache-control'), 'no-cache');
    assert.match(await page.text(), /<script type="module" src="\.\/main\.js"><\/script>/);

    const script = await h.get('/ui/login/main.js');
    assert.equal(script.headers.get('content-type'), 'text/javascript; charset=utf-8');
    const etag = script.headers.get('etag') ?? '';
    assert.ok(etag);
    const again = await h.get('/ui/login/main.js', { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);
    assert.equal((await h.get('/ui/style.css')).headers.get('content-type'), 'text/css; charset=utf-8');
    assert.equal((await h.get('/ui/vendor/uqr.js')).status, 200);
    assert.equal((await h.get('/ui/account/')).status, 200);

    const bare = await h.get('/ui/account?realm=main', { redirect: 'manual' });
    assert.equal(bare.status, 308);
    assert.equal(bare.headers.get('location'), '/ui/account/?realm=main');
  });

  test('case=nothing outside the built files is served', async (t) => {
    const h = await startUiHarness(t);
    for (const path of [
      '/ui/../package.json',
      '/ui/%2e%2e/package.json',
      '/ui/..%2fpackage.json',
      '/ui/login/../../../package.json',
      '/ui/lib/i18n.js.map',
      '/ui/lib/i18n.ts',
      '/ui/vendor/uqr.d.ts',
      '/ui/nothing.html',
      '/ui/login%00/',
    ]) {
      const r = await rawGet(h.publicUrl, path);
      assert.ok([400, 404].includes(r.status), `${path}: ${r.status}`);
    }
  });

  test('case=not served unless ui.enabled', async (t) => {
    const h = await startHarness(t);
    assert.equal((await h.get('/ui/login/')).status, 404);
  });

  test('case=a realm without a login UI of its own uses the built-in one when it is served', async (t) => {
    const h = await startUiHarness(t);
    const realm = await h.createRealm();
    const { params } = authorizeQuery('account', `${h.ctx.config.server.publicOrigin}/ui/account/`, {
      resource: accountAudience(h.ctx.config.server.publicOrigin, realm.name),
    });
    const r = await h.get(`/realms/${realm.name}/oauth/authorize?${params}`, { redirect: 'manual' });
    assert.equal(r.status, 303, await r.clone().text());
    const to = new URL(r.headers.get('location') ?? '');
    assert.equal(`${to.origin}${to.pathname}`, `${h.publicUrl}/ui/login/`);
    assert.equal(to.searchParams.get('realm'), realm.name);
    assert.ok(to.searchParams.get('transaction_id'));

    // A login UI the realm names still wins.
    await h.setPolicy(realm, { interaction: { login_ui_url: 'https://login.example.com/' } });
    const own = await h.get(
      `/realms/${realm.name}/oauth/authorize?${authorizeQuery('account', `${h.publicUrl}/ui/account/`).params}`,
      {
        redirect: 'manual',
      },
    );
    assert.equal(new URL(own.headers.get('location') ?? '').origin, 'https://login.example.com');
  });

  test('case=the account client accepts only the account page on the public origin', async (t) => {
    const h = await startUiHarness(t);
    const realm = await h.createRealm();
    const elsewhere = authorizeQuery('account', 'https://evil.example/ui/account/').params;
    const r = await h.get(`/realms/${realm.name}/oauth/authorize?${elsewhere}`, { redirect: 'manual' });
    assert.equal(r.status, 400);
    assert.equal(r.headers.get('location'), null);
  });

  test('case=the migration gives realms from before it the account client, once', async (t) => {
    const h = await startHarness(t);
    const without = await h.createRealm();
    const own = await h.createRealm();
    await h.ctx.db.query(`delete from clients where realm_id = any($1) and client_id = 'account'`, [
      [without.id, own.id],
    ]);
    await h.ctx.db.query(
      `insert into clients (realm_id, id, client_id, name, type, state, token_endpoint_auth_method)
       values ($1, 'cli_00000000000000000000000000', 'account', 'Theirs', 'web', 'active', 'client_secret_basic')`,
      [own.id],
    );
    const sql = readFileSync(
      join(import.meta.dirname, '../../../migrations/0011_account_client.sql'),
      'utf8',
    );
    await h.ctx.db.query(sql);
    await h.ctx.db.query(sql);
    const rows = await h.ctx.db.query<{ realm_id: string; name: string; builtin: boolean; id: string }>(
      `select realm_id, name, builtin, id from clients where realm_id = any($1) and client_id = 'account'`,
      [[without.id, own.id]],
    );
    const byRealm = new Map(rows.rows.map((r) => [r.realm_id, r]));
    assert.equal(rows.rows.length, 2);
    assert.equal(byRealm.get(without.id)?.builtin, true);
    assert.match(byRealm.get(without.id)?.id ?? '', /^cli_[0-9a-z]{26}$/);
    assert.equal(byRealm.get(own.id)?.name, 'Theirs', 'a client of its own named account is kept');
  });

  test('case=the German texts cover every English one, with the same placeholders', () => {
    const placeholders = (text: string) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const [key, text] of Object.entries(en)) {
      const german = de[key as keyof typeof en];
      assert.ok(german, `no German text for ${key}`);
      assert.deepEqual(placeholders(german), placeholders(text), key);
    }
  });
});
