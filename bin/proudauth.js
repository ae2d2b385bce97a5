#!/usr/bin/env -S node --max-semi-space-size=32
// Runs the compiled program from dist/ when it was built (npm run build), and the TypeScript
// sources through tsx in a source checkout. A server allocates short-lived objects for every
// request: a 32 MiB young generation (V8's default is 16) halves the time spent collecting them
// (bench/README.md) and costs nothing at idle, since the space grows only under load. A `serve`
// group's processes inherit the flag.
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
