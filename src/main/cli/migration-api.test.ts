// The API calls of identity-cli migrate-from (spec doc 2, "Migration adapters" rule 3): network
// errors and 5xx are tried again up to three times with the same request (so the same
// Idempotency-Key); a 4xx is answered at once; a job is polled until it is final.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { SignInEnded } from './cli-error.ts';
import { writeStore } from './credentials-store.ts';
import { MigrationApi } from './migration-api.ts';

type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

async function server(
  t: { after(fn: () => Promise<void>): void },
  handler: Handler,
  o: { file?: string; expired?: boolean } = {},
) {
  const seen: { path: string; key: string | undefined }[] = [];
  const srv = createServer((req, res) => {
    seen.push({ path: req.url ?? '', key: req.headers['idempotency-key'] as string | undefined });
    req.resume();
    req.on('end', () => handler(req, res, seen.length));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => srv.close(() => r())));
  const base = `http://127.0.0.1:${(srv.address() as AddressInfo).port}`;
  const credential = {
    issuer: `${base}/realms/main`,
    realm: 'main',
    server: base,
    audience: `${base}/api/v1/realms/main`,
    apiBase: `${base}/api/v1/realms/main`,
    user: { id: 'usr_x', name: null, email: null },
    accessToken: 'token',
    expiresAt: new Date(Date.now() + (o.expired ? -60_000 : 3_600_000)),
    refreshToken: o.expired ? 'refresh-token' : null,
    updatedAt: new Date(),
  };
  if (o.file) writeStore(o.file, new Map([[credential.issuer, credential]]));
  const api = new MigrationApi({ file: o.file ?? '/nonexistent/credentials.json', credential });
  return { api, seen };
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

describe('migrate-from API calls', () => {
  test('case=5xx and a dropped connection are retried with the same Idempotency-Key', async (t) => {
    const { api, seen } = await server(t, (_req, res, n) => {
      if (n === 1) return json(res, 503, { code: 'unavailable' });
      if (n === 2) return res.socket?.destroy();
      return json(res, 202, { job_id: 'job_1' });
    });
    const out = await api.ok('POST', '/user-imports', { users: [] }, { 'idempotency-key': 'k-1' });
    assert.deepEqual(out, { job_id: 'job_1' });
    assert.deepEqual(
      seen.map((s) => s.key),
      ['k-1', 'k-1', 'k-1'],
    );
  });

  test('case=a 4xx is not retried; four 5xx in a row give up', async (t) => {
    const { api, seen } = await server(t, (req, res) =>
      req.url?.endsWith('/bad') ? json(res, 422, { code: 'validation_failed' }) : json(res, 500, {}),
    );
    await assert.rejects(api.ok('POST', '/bad', {}), /422/);
    assert.equal(seen.length, 1);
    await assert.rejects(api.ok('GET', '/broken'), /failed after 3 retries/);
    assert.equal(seen.length, 1 + 4);
  });

  test('case=a sign-in whose session ended stops at once and says to log in and run again', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'pa-migrate-api-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const { api, seen } = await server(
      t,
      (req, res) =>
        req.url?.endsWith('/oauth/token')
          ? json(res, 400, { error: 'invalid_grant', error_description: 'the session has ended' })
          : json(res, 200, { id: 'job_1', state: 'running' }),
      { file: join(dir, 'credentials.json'), expired: true },
    );
    const err = await api.waitForJob('job_1').then(
      () => assert.fail('the poll went on'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof SignInEnded, String(err));
    assert.match(err.message, /the session has ended/);
    assert.match(err.message, /run identity-cli login --realm main/);
    assert.match(err.message, /run the same identity-cli migrate-from command again/);
    assert.deepEqual(
      seen.map((s) => s.path),
      ['/realms/main/oauth/token'],
      'one refresh attempt, no retries, no API call with the dead token',
    );
  });

  test('case=a job is polled until it is final', async (t) => {
    const { api, seen } = await server(t, (_req, res, n) =>
      json(res, 200, { id: 'job_1', state: n < 2 ? 'running' : 'dead_letter', last_error: 'lost' }),
    );
    const job = await api.waitForJob('job_1');
    assert.equal(job.state, 'dead_letter');
    assert.equal(seen.length, 2);
  });
});
