#!/usr/bin/env node
// Runs the compiled program from dist/ when it was built (npm run build), and the TypeScript
// sources through tsx in a source checkout.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiled = new URL('../dist/main/proudauth.js', import.meta.url);
if (existsSync(fileURLToPath(compiled))) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(new URL('../src/main/proudauth.ts', import.meta.url).href);
}
