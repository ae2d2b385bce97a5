// One-shot commands open no internal listener, so a server.metrics_token reference meant for the
// server (README's production example reads it from the environment) must not make them log an
// error when the variable is absent from the operator's shell (issue 26).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type Deployment, type RunResult, run, scratchDeployment } from './cli-process.ts';

const LIMIT = { timeout: 120_000 };
const TOKEN_REF = { PROUDAUTH_SERVER_METRICS_TOKEN: 'env:PROUDAUTH_TEST_METRICS_TOKEN_NOT_SET' };

let dep: Deployment;
let migrate: RunResult;
let status: RunResult;

describe('one-shot commands and server.metrics_token', () => {
  before(async () => {
    dep = await scratchDeployment();
    migrate = await run('proudauth', ['migrate'], { env: dep.env(TOKEN_REF) });
    status = await run('identity-cli', ['maintenance', 'status'], { env: dep.env(TOKEN_REF) });
  }, LIMIT);
  after(() => dep?.cleanup());

  test('case=proudauth migrate applies the schema without a word about the metrics token', () => {
    assert.equal(migrate.code, 0, migrate.stderr);
    assert.equal(JSON.parse(migrate.stdout.trim().split('\n').at(-1)!).current, true);
    assert.doesNotMatch(migrate.stdout + migrate.stderr, /metrics_token/);
    assert.doesNotMatch(migrate.stdout + migrate.stderr, /"level":(50|60)/);
  });

  test('case=an identity-cli command does not mention the metrics token either', () => {
    assert.equal(status.code, 0, status.stderr);
    assert.doesNotMatch(status.stdout + status.stderr, /metrics_token/);
  });
});
