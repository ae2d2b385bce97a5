import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { LineSink } from './log-sink.ts';

const tempFile = (): string => join(mkdtempSync(join(tmpdir(), 'log-sink-')), 'out.log');
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe('log line sink', () => {
  test('case=lines of one turn are written together when the turn ends, in order', async () => {
    const file = tempFile();
    const fd = openSync(file, 'w');
    const sink = new LineSink(fd);
    sink.write('{"n":1}\n');
    sink.write('{"n":2}\n');
    assert.equal(readFileSync(file, 'utf8'), '', 'nothing is written inside the turn');
    await nextTurn();
    assert.equal(readFileSync(file, 'utf8'), '{"n":1}\n{"n":2}\n');
    sink.write('{"n":3}\n');
    await nextTurn();
    assert.equal(readFileSync(file, 'utf8'), '{"n":1}\n{"n":2}\n{"n":3}\n');
    closeSync(fd);
  });

  test('case=a large batch is written at once, without waiting for the turn to end', () => {
    const file = tempFile();
    const fd = openSync(file, 'w');
    const sink = new LineSink(fd);
    const line = `${JSON.stringify({ pad: 'x'.repeat(1000) })}\n`;
    for (let i = 0; i < 70; i++) sink.write(line);
    assert.ok(readFileSync(file, 'utf8').length >= 64 * 1024);
    sink.flushSync();
    assert.equal(readFileSync(file, 'utf8'), line.repeat(70));
    closeSync(fd);
  });

  test('case=lines held when the process exits are written before it ends', () => {
    const file = tempFile();
    const script = `
      import { openSync } from 'node:fs';
      import { LineSink } from ${JSON.stringify(new URL('./log-sink.ts', import.meta.url).pathname)};
      const sink = new LineSink(openSync(${JSON.stringify(file)}, 'w'));
      for (let i = 0; i < 5; i++) sink.write(JSON.stringify({ i }) + '\\n');
      process.exit(0);`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(
      readFileSync(file, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).i),
      [0, 1, 2, 3, 4],
    );
  });
});
