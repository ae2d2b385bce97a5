// Writes docs/configuration-reference.md from the settings table, so the reference cannot drift
// from what the loader accepts (a test compares the two).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { configReferenceMarkdown } from '../src/platform/config/reference.ts';

writeFileSync(
  join(import.meta.dirname, '..', 'docs', 'configuration-reference.md'),
  configReferenceMarkdown(),
);
