import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { describe, test } from 'node:test';
import { loadConfig } from '../platform/config/load.ts';
import { serveProcessCount, workerExecArgv } from './serve-group.ts';

const PG = 'postgres://proudauth@127.0.0.1:5432/proudauth';
const config = (overrides: Record<string, unknown>) => loadConfig({ file: null, env: {}, overrides });

describe('serve › process count', () => {
  test('case=by default one process per CPU core on PostgreSQL', () => {
    assert.equal(serveProcessCount(config({ 'database.url': PG })), availableParallelism());
  });

  test('case=server.processes sets the count', () => {
    assert.equal(serveProcessCount(config({ 'database.url': PG, 'server.processes': 3 })), 3);
  });

  test('case=the embedded database stays one process, whatever the setting', () => {
    assert.equal(serveProcessCount(config({ 'server.processes': 4 })), 1);
    assert.equal(serveProcessCount(config({})), 1);
  });

  test('case=a negative count is refused with the setting named', () => {
    assert.throws(() => config({ 'database.url': PG, 'server.processes': -1 }), /server\.processes/);
  });
});

describe('serve › node options of the group', () => {
  test('case=the processes get a 32 MiB young generation beside the primary options', () => {
    assert.deepEqual(workerExecArgv(['--import', 'tsx'], undefined), [
      '--import',
      'tsx',
      '--max-semi-space-size=32',
    ]);
  });

  test('case=a size the operator chose, on the command line or in NODE_OPTIONS, is kept', () => {
    assert.deepEqual(workerExecArgv(['--max-semi-space-size=16'], undefined), ['--max-semi-space-size=16']);
    assert.deepEqual(workerExecArgv([], '--max-old-space-size=512 --max-semi-space-size=8'), []);
  });
});
