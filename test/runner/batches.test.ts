// The test runner's batching (scripts/test-runner/batches.ts): which files share a process, and
// how a batch's output is read back per file.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { batchesOf, fileOutcomes, OWN_PROCESS_MARKER } from '../../scripts/test-runner/batches.ts';

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'batches-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(root, name), text);
  return root;
}

describe('test runner › batches', () => {
  it('a long file runs alone, short ones share a process up to the budget and the file limit', () => {
    const names = ['long.test.ts', ...Array.from({ length: 40 }, (_, i) => `s${i}.test.ts`)];
    const root = tree(Object.fromEntries(names.map((n) => [n, '// a test file\n'])));
    const estimate = new Map<string, number>([['long.test.ts', 300_000]]);
    for (let i = 0; i < 40; i++) estimate.set(`s${i}.test.ts`, 1_000);
    // 340 s over 2 workers: a batch holds about 14 s.
    const batches = batchesOf(names, estimate, { root, concurrency: 2, maxFiles: 8 });
    assert.deepEqual(batches[0], ['long.test.ts']);
    assert.ok(batches.slice(1).every((b) => b.length >= 2 && b.length <= 8));
    assert.deepEqual(batches.flat().sort(), [...names].sort());
  });

  it('a file with the marker and every file under a limit of one get a process of their own', () => {
    const root = tree({
      'big.test.ts': '',
      'a.test.ts': '',
      'b.test.ts': `// ${OWN_PROCESS_MARKER}: it changes the process's umask\n`,
      'c.test.ts': '',
    });
    // The big file makes the budget (about 8.6) hold all three small ones.
    const estimate = new Map([
      ['big.test.ts', 100],
      ['a.test.ts', 1],
      ['b.test.ts', 1],
      ['c.test.ts', 1],
    ]);
    const files = ['big.test.ts', 'a.test.ts', 'b.test.ts', 'c.test.ts'];
    const shared = batchesOf(files, estimate, { root, concurrency: 1, maxFiles: 16 });
    assert.ok(shared.some((b) => b.length === 1 && b[0] === 'b.test.ts'));
    assert.ok(shared.some((b) => b.includes('a.test.ts') && b.includes('c.test.ts')));
    const alone = batchesOf(files, estimate, { root, concurrency: 1, maxFiles: 1 });
    assert.equal(alone.length, 4);
  });

  it("each file's time and failure are read from the line that ends its suite", () => {
    const output = [
      '▶ test/a.test.ts',
      '  ✔ case=one (12.5ms)',
      '✔ test/a.test.ts (20.25ms)',
      '▶ test/b.test.ts',
      '  ✖ case=two (3ms)',
      '✖ test/b.test.ts (7.5ms)',
      '✖ failing tests:',
      '✖ test/b.test.ts (7.5ms)',
    ].join('\n');
    const { ms, failed } = fileOutcomes(output);
    assert.deepEqual(
      [...ms],
      [
        ['test/a.test.ts', 20.25],
        ['test/b.test.ts', 7.5],
      ],
    );
    assert.deepEqual([...failed], ['test/b.test.ts']);
  });
});
