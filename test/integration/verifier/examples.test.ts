// examples/verifier-fastify.mjs and examples/verifier-express.mjs run as a reader would run them,
// against a running server: a valid token is served, a missing one is 401 with a Bearer challenge,
// and in bounded-state mode a revocation turns the token away once the stream delivered it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { childEnv } from '../cli/cli-process.ts';
import { ROOT } from '../examples/examples-kit.ts';
import { AUDIENCE, verifierKit } from './verifier-kit.ts';

/** Starts the example and resolves with its address once it says it listens. */
function startExample(t: TestContext, file: string, env: Record<string, string>): Promise<string> {
  const child = spawn(process.execPath, [join(ROOT, 'examples', file)], {
    cwd: ROOT,
    env: childEnv({ ...env, PORT: '0' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    child.kill();
  });
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (s: string) => {
      output += s;
      const m = /listening on (http:\/\/\S+)/.exec(output);
      if (m?.[1]) resolve(m[1]);
    };
    child.stdout.setEncoding('utf8').on('data', onData);
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      output += s;
    });
    child.on('close', (code) =>
      reject(new Error(`${file} exited with ${code} before listening:\n${output}`)),
    );
  });
}

/** Asks until the answer's status is `status`; each ask waits for the previous answer. */
async function statusBecomes(ask: () => Promise<Response>, status: number, attempts = 200): Promise<number> {
  let last = 0;
  for (let i = 0; i < attempts; i++) {
    const res = await ask();
    await res.body?.cancel();
    last = res.status;
    if (last === status) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  return last;
}

for (const file of ['verifier-fastify.mjs', 'verifier-express.mjs']) {
  describe(`verifier › ${file}`, () => {
    test('case=bounded-state mode serves a valid token and refuses it after a revocation', async (t) => {
      const k = await verifierKit(t);
      const { token, userId } = await k.subject();
      const url = await startExample(t, file, {
        ISSUER: k.issuer,
        AUDIENCE,
        VERIFY_MODE: 'bounded-state',
        CLIENT_ID: k.reader.clientId,
        CLIENT_SECRET: k.reader.secret,
      });
      const orders = () => fetch(`${url}/orders`, { headers: { authorization: `Bearer ${token}` } });
      const ok = await orders();
      assert.equal(ok.status, 200);
      assert.equal(((await ok.json()) as { subject: string }).subject, userId);
      const bare = await fetch(`${url}/orders`);
      assert.equal(bare.status, 401);
      assert.match(String(bare.headers.get('www-authenticate')), /^Bearer error="invalid_token"/);
      await bare.body?.cancel();
      await k.revokeSessions(userId);
      assert.equal(await statusBecomes(orders, 401), 401);
    });

    test('case=offline and introspection modes accept the token', async (t) => {
      const k = await verifierKit(t);
      const { token, userId } = await k.subject();
      for (const [mode, creds] of [
        ['offline', { CLIENT_ID: '', CLIENT_SECRET: '' }],
        ['introspection', { CLIENT_ID: k.introspector.clientId, CLIENT_SECRET: k.introspector.secret }],
      ] as const) {
        const url = await startExample(t, file, { ISSUER: k.issuer, AUDIENCE, VERIFY_MODE: mode, ...creds });
        const res = await fetch(`${url}/orders`, { headers: { authorization: `Bearer ${token}` } });
        assert.equal(res.status, 200, mode);
        assert.equal(((await res.json()) as { subject: string }).subject, userId, mode);
      }
    });
  });
}
