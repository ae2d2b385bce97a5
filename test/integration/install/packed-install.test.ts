// The production install path of docs/deployment.md, done as an operator does it: `npm pack`,
// deploy/install.sh into an empty folder (without the embedded database), `proudauth migrate` on a
// new PostgreSQL database, `identity-cli realm create`, then `proudauth serve` and `proudauth worker`
// as two processes with one YAML file. Readiness, discovery, a client_credentials token and a
// worker task are checked against the installed processes, which then stop on SIGTERM.
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openPostgres } from '../../../src/platform/db/pg.ts';
import { findRealmByName } from '../../../src/realms/realm.repo.ts';
import { startHarness, TEST_ROOT_KEY } from '../../harness/harness.ts';
import { TEST_DATABASE_URL } from '../../harness/test-db.ts';
import { basic, seedGrant, seedResource, seedServiceClient } from '../../harness/token-kit.ts';
import { scratchDeployment } from '../cli/cli-process.ts';
import { until } from '../faults/drill-kit.ts';
import { ensureBuilt, exec, Installed, install, installedBin, operatorEnv, pack } from './install-kit.ts';

const SKIP = TEST_DATABASE_URL
  ? false
  : 'the production install runs on PostgreSQL (PROUDAUTH_TEST_DATABASE_URL is unset); the embedded database is for development';

const ORIGIN = 'https://id.example.test';
const AUDIENCE = 'https://orders.example.test';

/** The operator's file: production rules, the root key by reference, listeners on free ports. */
function configYaml(databaseUrl: string, keyFile: string): string {
  return [
    'environment: production',
    'database:',
    `  url: ${databaseUrl}`,
    'keys:',
    '  root:',
    `    1: file:${keyFile}`,
    '  active_version: 1',
    'server:',
    `  public_origin: ${ORIGIN}`,
    '  listen: 127.0.0.1:0',
    '  internal_listen: 127.0.0.1:0',
    '  processes: 1',
    '  drain_delay: 0s',
    'workers:',
    '  metrics_listen: 127.0.0.1:0',
    '',
  ].join('\n');
}

test('install › the packed tarball installs into an empty folder and runs on PostgreSQL', {
  skip: SKIP,
  timeout: 600_000,
}, async (t) => {
  const work = mkdtempSync(join(tmpdir(), 'proudauth-install-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  const started = Date.now();
  const built = await ensureBuilt();
  const tarball = await pack(work);
  const prefix = join(work, 'opt', 'proudauth');
  await install(prefix, tarball);
  t.diagnostic(`dist ${built}; packed and installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const proudauth = installedBin(prefix, 'proudauth');
  const cli = installedBin(prefix, 'identity-cli');

  const deployment = await scratchDeployment();
  t.after(() => deployment.cleanup());
  assert.ok(deployment.databaseUrl);
  const etc = join(work, 'etc');
  mkdirSync(etc);
  const keyFile = join(etc, 'root-key-1');
  writeFileSync(keyFile, TEST_ROOT_KEY);
  chmodSync(keyFile, 0o600);
  const config = join(etc, 'proudauth.yaml');
  writeFileSync(config, configYaml(deployment.databaseUrl, keyFile));
  const run = (bin: string, args: string[]) => exec(bin, [...args, '--config', config], { cwd: work });

  await t.test(
    'case=the install has no embedded database; dev without database.url says how to add it',
    async () => {
      const r = await exec(proudauth, ['dev'], {
        cwd: work,
        env: operatorEnv({ PROUDAUTH_DATA_DIR: join(work, 'dev') }),
      });
      assert.equal(r.code, 1);
      assert.match(r.stderr, /the embedded database needs the optional package @electric-sql\/pglite/);
      assert.match(r.stderr, /npm install @electric-sql\/pglite@\d/);
      assert.doesNotMatch(r.stderr, /\n\s+at /, 'no stack trace');
    },
  );

  await t.test('case=proudauth migrate brings the new database to the current schema', async () => {
    const r = await run(proudauth, ['migrate']);
    assert.equal(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout) as { applied: number[]; current: boolean };
    assert.equal(out.current, true);
    assert.ok(out.applied.length > 0);
  });

  await t.test('case=identity-cli realm create makes the first realm', async () => {
    const r = await run(cli, ['realm', 'create', 'main']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal((JSON.parse(r.stdout) as { issuer: string }).issuer, `${ORIGIN}/realms/main`);
  });

  // A service client with a secret, seeded in this process (the administration API has its own tests).
  const db = openPostgres({ url: deployment.databaseUrl, maxConns: 2, statementTimeoutMs: 30_000 });
  t.after(() => db.close());
  const h = await startHarness(t, { db });
  const realm = await findRealmByName(db, 'main');
  assert.ok(realm);
  const resource = await seedResource(h, realm, { audience: AUDIENCE, scopes: ['orders:read'] });
  const svc = await seedServiceClient(h, realm, 'batch');
  await seedGrant(h, realm, svc.client, resource, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });

  const serve = new Installed(proudauth, ['serve', '--config', config], work);
  const worker = new Installed(proudauth, ['worker', '--config', config], work);
  t.after(() => {
    serve.kill();
    worker.kill();
  });
  const [, publicUrl = ''] = await serve.waitFor(/"command":"serve","public":"(http[^"]+)"/, 120_000);
  await worker.waitFor(/"command":"worker"/, 120_000);

  await t.test('case=serve answers ready and publishes the discovery document', async () => {
    const ready = await fetch(`${publicUrl}/health/ready`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready' });
    const disco = await fetch(`${publicUrl}/realms/main/.well-known/openid-configuration`);
    assert.equal(disco.status, 200);
    const body = (await disco.json()) as Record<string, unknown>;
    assert.equal(body.issuer, `${ORIGIN}/realms/main`);
    assert.equal(body.token_endpoint, `${ORIGIN}/realms/main/oauth/token`);
  });

  await t.test('case=a client_credentials request gets an access token', async () => {
    const res = await fetch(`${publicUrl}/realms/main/oauth/token`, {
      method: 'POST',
      headers: {
        authorization: basic(svc.creds.clientId, svc.creds.secret),
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams({ grant_type: 'client_credentials', resource: AUDIENCE }).toString(),
    });
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(res.status, 200, JSON.stringify(body));
    assert.equal(body.token_type, 'Bearer');
    assert.equal(typeof body.access_token, 'string');
  });

  await t.test('case=the worker seals the audit records of the realm creation', async () => {
    await until('audit records sealed by the worker', 60_000, async () => {
      const r = await db.query<{ unsealed: string }>(
        `select count(*) filter (where batch_id is null) as unsealed from audit_events
          where type in ('realm.created', 'signing_key.created')`,
      );
      return r.rows[0]?.unsealed === '0' ? true : null;
    });
    const batches = await db.query('select 1 from audit_batches');
    assert.ok((batches.rowCount ?? 0) >= 1);
  });

  await t.test('case=both processes stop cleanly on SIGTERM', async () => {
    serve.signal('SIGTERM');
    worker.signal('SIGTERM');
    const [s, w] = await Promise.all([serve.exited, worker.exited]);
    assert.deepEqual(s, { code: 0, signal: null }, serve.stderr);
    assert.deepEqual(w, { code: 0, signal: null }, worker.stderr);
    for (const p of [serve, worker]) {
      assert.match(p.stdout, /"msg":"shutdown: closed"/);
      assert.doesNotMatch(p.stdout + p.stderr, /"level":(50|60)|unhandled error/);
    }
  });
  t.diagnostic(`whole install path in ${((Date.now() - started) / 1000).toFixed(1)} s`);
});
