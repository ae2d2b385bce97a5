// External policy engines (docs/authorization.md, "External policy engine"): a real HTTP server
// speaking Open Policy Agent's data API, under both modes and both error rules.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { parseEngineTable } from '../../../src/decisions/policy-engine.ts';
import { createLogger } from '../../../src/platform/log.ts';
import { checkBody, type DecisionKit, decisionKit } from './decision-kit.ts';

type Behaviour =
  | 'allow'
  | 'deny'
  | 'allow-object'
  | 'status-500'
  | 'slow'
  | 'garbage'
  | 'huge-streamed'
  | 'huge-declared'
  | 'multibyte';

const MIB = 1024 * 1024;

interface Engine {
  url: string;
  behaviour: Behaviour;
  inputs: unknown[];
  /** Answers whose connection the service closed before the engine finished them. */
  abandoned: number;
}

/** Polls until the engine server has seen what the assertion needs (its events are asynchronous). */
async function waitFor(seen: () => boolean): Promise<void> {
  while (!seen()) await new Promise((resolve) => setTimeout(resolve, 10));
}

async function startEngine(t: { after(fn: () => Promise<void>): void }): Promise<Engine> {
  const engine: Engine = { url: '', behaviour: 'allow', inputs: [], abandoned: 0 };
  const server: Server = createServer((req, res) => {
    res.on('close', () => {
      if (!res.writableFinished) engine.abandoned++;
    });
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      engine.inputs.push((JSON.parse(body) as { input: unknown }).input);
      const send = (status: number, text: string) => {
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(text);
      };
      switch (engine.behaviour) {
        case 'allow':
          return send(200, '{"result": true}');
        case 'deny':
          return send(200, '{"result": false}');
        case 'allow-object':
          return send(200, '{"result": {"allow": true}}');
        case 'status-500':
          return send(500, '{"error": "boom"}');
        case 'garbage':
          return send(200, '{"decision": "yes"}');
        // Never answers: only the service's time limit ends the wait, however loaded the machine.
        case 'slow':
          return;
        // 1 MiB without a length, and the answer never ends: only a running count stops it.
        case 'huge-streamed':
          res.writeHead(200, { 'content-type': 'application/json' });
          res.write(`{"result": true, "pad": "${'x'.repeat(MIB)}`);
          return;
        case 'huge-declared':
          res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(MIB) });
          res.write('{"result": true, "pad": "');
          return;
        // Under 64 Ki characters, over 64 KiB: the cap is on bytes.
        case 'multibyte':
          return send(200, `{"result": true, "pad": "${'\u00e9'.repeat(40_000)}"}`);
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  if (!addr || typeof addr === 'string') throw new Error('engine not listening');
  engine.url = `http://127.0.0.1:${addr.port}/v1/data/authz/allow`;
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return engine;
}

async function setup(
  t: Parameters<typeof decisionKit>[0],
): Promise<{ k: DecisionKit; engine: Engine; token: string }> {
  const engine = await startEngine(t);
  const k = await decisionKit(t, {
    overrides: {
      'authorization.policy_engines': `opa=${engine.url}`,
      // Generous, so that an engine that does answer always makes it in time on a busy machine.
      'authorization.policy_engine_timeout': '2s',
    },
  });
  const role = await k.role('editor', ['documents.edit']);
  const { userId, token } = await k.subject();
  await k.assign(role, { type: 'user', id: userId });
  return { k, engine, token };
}

const codeOf = async (k: DecisionKit, token: string, action: string) =>
  (await k.check(checkBody(token, action, { type: 'document', id: 'd1' }, { ip: '203.0.113.9' }))).body
    .reason_code;

describe('decisions › external policy engine', () => {
  test('case=restrict asks only about what local rules allow and may deny it', async (t) => {
    const { k, engine, token } = await setup(t);
    await k.h.setPolicy(k.realm, { policy_engine: { name: 'opa' } });
    engine.behaviour = 'allow';
    assert.equal(await codeOf(k, token, 'documents.edit'), 'ALLOWED');
    assert.equal(engine.inputs.length, 1);
    const input = engine.inputs[0] as Record<string, unknown>;
    assert.equal(input.action, 'documents.edit');
    assert.deepEqual(input.context, { ip: '203.0.113.9' });
    assert.deepEqual((input.resource as Record<string, unknown>).id, 'd1');
    assert.equal((input.subject as Record<string, unknown>).type, 'user');

    assert.equal(await codeOf(k, token, 'documents.delete'), 'NOT_PERMITTED');
    assert.equal(engine.inputs.length, 1, 'a local denial is not sent to the engine');

    engine.behaviour = 'deny';
    assert.equal(await codeOf(k, token, 'documents.edit'), 'EXTERNAL_POLICY_DENIED');
    engine.behaviour = 'allow-object';
    assert.equal(await codeOf(k, token, 'documents.edit'), 'ALLOWED');
  });

  test('case=decide makes the engine final either way', async (t) => {
    const { k, engine, token } = await setup(t);
    await k.h.setPolicy(k.realm, { policy_engine: { name: 'opa', mode: 'decide' } });
    engine.behaviour = 'allow';
    assert.equal(await codeOf(k, token, 'documents.delete'), 'ALLOWED');
    engine.behaviour = 'deny';
    assert.equal(await codeOf(k, token, 'documents.edit'), 'EXTERNAL_POLICY_DENIED');
    // Inactive subjects never reach the engine.
    const before = engine.inputs.length;
    assert.equal(await codeOf(k, 'garbage', 'documents.edit'), 'SUBJECT_TOKEN_INACTIVE');
    assert.equal(engine.inputs.length, before);
  });

  test('case=timeouts, errors and bad answers follow on_error', async (t) => {
    const { k, engine, token } = await setup(t);
    const cases: [string, string, Behaviour, string, string][] = [
      // mode, on_error, behaviour, action, expected
      ['restrict', 'deny', 'slow', 'documents.edit', 'EXTERNAL_POLICY_UNAVAILABLE'],
      ['restrict', 'deny', 'status-500', 'documents.edit', 'EXTERNAL_POLICY_UNAVAILABLE'],
      ['restrict', 'deny', 'garbage', 'documents.edit', 'EXTERNAL_POLICY_UNAVAILABLE'],
      ['restrict', 'local', 'slow', 'documents.edit', 'ALLOWED'],
      ['restrict', 'local', 'status-500', 'documents.edit', 'ALLOWED'],
      ['decide', 'deny', 'slow', 'documents.edit', 'EXTERNAL_POLICY_UNAVAILABLE'],
      ['decide', 'deny', 'status-500', 'documents.delete', 'EXTERNAL_POLICY_UNAVAILABLE'],
      ['decide', 'local', 'slow', 'documents.edit', 'ALLOWED'],
      ['decide', 'local', 'status-500', 'documents.delete', 'NOT_PERMITTED'],
    ];
    for (const [mode, onError, behaviour, action, expected] of cases) {
      await k.h.setPolicy(k.realm, { policy_engine: { name: 'opa', mode, on_error: onError } });
      engine.behaviour = behaviour;
      const r = await k.check(checkBody(token, action));
      assert.equal(r.body.reason_code, expected, `${mode}/${onError}/${behaviour}`);
      if (expected === 'EXTERNAL_POLICY_UNAVAILABLE') assert.equal(r.body.cache_ttl_seconds, 0);
    }
  });

  // The timeout is far away: an answer refused for its size is stopped by the byte count, which
  // the service logs as the reason, and the engine sees the connection closed mid-answer.
  test('case=an answer over 64 KiB is refused while it streams, not after', async (t) => {
    const engine = await startEngine(t);
    const logged: { msg?: string; reason?: string }[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n')) if (line) logged.push(JSON.parse(line));
        done();
      },
    });
    const k = await decisionKit(t, {
      overrides: {
        'authorization.policy_engines': `opa=${engine.url}`,
        'authorization.policy_engine_timeout': '30s',
      },
      log: createLogger('warn', sink),
    });
    const role = await k.role('editor', ['documents.edit']);
    const { userId, token } = await k.subject();
    await k.assign(role, { type: 'user', id: userId });
    await k.h.setPolicy(k.realm, { policy_engine: { name: 'opa' } });
    for (const behaviour of ['huge-streamed', 'huge-declared', 'multibyte'] as const) {
      engine.behaviour = behaviour;
      logged.length = 0;
      const abandoned = engine.abandoned;
      assert.equal(await codeOf(k, token, 'documents.edit'), 'EXTERNAL_POLICY_UNAVAILABLE', behaviour);
      const reasons = logged.filter((l) => l.msg === 'policy engine unavailable').map((l) => l.reason);
      assert.deepEqual(reasons, ['answer too large'], behaviour);
      if (behaviour !== 'multibyte') {
        // These answers never end: only the service closing the connection ends them.
        await waitFor(() => engine.abandoned > abandoned);
      }
    }
  });

  test('case=an engine the operator did not configure is an evaluation error', async (t) => {
    const { k, token } = await setup(t);
    await k.h.setPolicy(k.realm, { policy_engine: { name: 'missing' } });
    assert.equal(await codeOf(k, token, 'documents.edit'), 'EVALUATION_ERROR');
  });

  test('case=a batch asks the engine once per check', async (t) => {
    const { k, engine, token } = await setup(t);
    await k.h.setPolicy(k.realm, { policy_engine: { name: 'opa', mode: 'decide' } });
    engine.behaviour = 'allow';
    const r = await k.post('/authorization/check-batch', {
      checks: Array.from({ length: 20 }, (_, i) =>
        checkBody(token, 'documents.delete', { type: 'document', id: `d${i}` }),
      ),
    });
    assert.equal(engine.inputs.length, 20);
    assert.ok((r.body.results as { reason_code: string }[]).every((x) => x.reason_code === 'ALLOWED'));
  });
});

describe('decisions › engine table', () => {
  test('case=the operator setting is name=url pairs', () => {
    const table = parseEngineTable(
      'opa=http://127.0.0.1:8181/v1/data/authz/allow, audit=https://pdp.example/v1/data/x',
    );
    assert.deepEqual([...table.keys()], ['opa', 'audit']);
    assert.throws(() => parseEngineTable('opa'));
    assert.throws(() => parseEngineTable('opa=ftp://x'));
    assert.throws(() => parseEngineTable('a=http://x,a=http://y'));
    assert.equal(parseEngineTable(null).size, 0);
  });
});
