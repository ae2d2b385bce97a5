import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { configReferenceMarkdown } from './reference.ts';

test('docs/configuration-reference.md is the generated settings table', () => {
  const path = join(import.meta.dirname, '..', '..', '..', 'docs', 'configuration-reference.md');
  assert.equal(
    readFileSync(path, 'utf8'),
    configReferenceMarkdown(),
    'regenerate it with: node --import tsx scripts/config-doc.ts',
  );
});
