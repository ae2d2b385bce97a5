// Writes the OpenAPI 3.1 document of the public listener to docs/openapi.json (`npm run openapi`),
// or, with --check (`npm run openapi:check`, run by .ci/run), fails when the committed file
// differs from the generated one. Either way the document is first validated against the
// OpenAPI 3.1 schema (@seriousme/openapi-schema-validator). The app is built from the default
// configuration over a database that refuses every query: the document comes from the route
// table alone (docs/openapi.md).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createContext } from '../src/main/context.ts';
import { buildPublicApp } from '../src/main/http-server.ts';
import { loadConfig } from '../src/platform/config/load.ts';
import type { Db } from '../src/platform/db/db.ts';
import { openApiDocument } from '../src/platform/http/openapi.ts';
import { createLogger } from '../src/platform/log.ts';

const target = join(import.meta.dirname, '..', 'docs', 'openapi.json');
const check = process.argv.includes('--check');

const noDatabase = (): never => {
  throw new Error('the OpenAPI document is built from the route table; nothing may query');
};
const db: Db = { kind: 'pglite', query: noDatabase, tx: noDatabase, exec: noDatabase, close: async () => {} };

const config = loadConfig({
  file: null,
  env: {},
  // A fixed root key: the document must not depend on the environment it is generated in.
  overrides: { 'keys.root.1': Buffer.alloc(32, 1).toString('base64'), 'keys.active_version': 1 },
});
const ctx = await createContext(config, { db, env: {}, log: createLogger('silent'), servesMetrics: false });
const app = buildPublicApp(ctx);
await app.ready();
const doc = openApiDocument(app);
await app.close();
ctx.detachSignals();

const result = await new Validator().validate(doc);
if (!result.valid) {
  process.stderr.write(
    `the generated document is not valid OpenAPI 3.1:\n${JSON.stringify(result.errors, null, 2)}\n`,
  );
  process.exit(1);
}

const text = `${JSON.stringify(doc, null, 2)}\n`;
if (check) {
  let committed = '';
  try {
    committed = readFileSync(target, 'utf8');
  } catch {
    // A missing file differs like any other.
  }
  if (committed !== text) {
    process.stderr.write(
      'docs/openapi.json differs from the route table: run `npm run openapi` and commit it\n',
    );
    process.exit(1);
  }
  process.stdout.write('docs/openapi.json matches the route table and is valid OpenAPI 3.1\n');
} else {
  writeFileSync(target, text);
  process.stdout.write(`wrote docs/openapi.json (${Object.keys(doc.paths as object).length} paths)\n`);
}
process.exit(0);
