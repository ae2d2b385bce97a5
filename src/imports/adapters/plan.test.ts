// Batches of the converted documents (docs/migration.md, "Batches"): at most --batch-size users,
// and fewer when the users' JSON would pass the byte budget, so that every document fits the
// service's default body limit; the order and the users stay the same.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { adapterNamed, buildDocuments, defaultMappingOf } from './index.ts';

const FIXTURE = join(
  import.meta.dirname,
  '..',
  '..',
  '..',
  'test',
  'fixtures',
  'migration',
  'keycloak-26-realm.json',
);

/** The fixture's first user (PBKDF2-SHA512 and TOTP credentials) copied `n` times. */
function keycloakExport(n: number) {
  const doc = JSON.parse(readFileSync(FIXTURE, 'utf8'));
  const [first] = doc.users;
  const users = Array.from({ length: n }, (_, i) => ({
    ...first,
    id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
    username: `user${i}`,
    email: `user${i}@example.com`,
  }));
  return { ...doc, users, organizations: [], groups: [] };
}

const options = {
  sourceSystem: 'kc',
  importTotp: true,
  trustEmailVerification: false,
  allowOwnerRoles: false,
};

test('case=batches end at the batch size or before the byte budget, whichever comes first/mode=offline', () => {
  const adapter = adapterNamed('keycloak');
  assert.ok(adapter);
  const conversion = adapter.convert([keycloakExport(500)], { sourceSystem: 'kc', keepAttributes: false });
  const bySize = buildDocuments(conversion, defaultMappingOf(), {
    ...options,
    batchSize: 200,
    batchBytes: 10_000_000,
  });
  assert.deepEqual(
    bySize.documents.map((d) => (d.users as unknown[]).length),
    [200, 200, 100],
  );
  const byBytes = buildDocuments(conversion, defaultMappingOf(), { ...options, batchSize: 500 });
  const sizes = byBytes.documents.map((d) => (d.users as unknown[]).length);
  assert.ok(sizes.length > 1, `500 such users pass the default budget: ${sizes}`);
  assert.equal(
    sizes.reduce((a, b) => a + b, 0),
    500,
  );
  for (const d of byBytes.documents)
    assert.ok(
      Buffer.byteLength(JSON.stringify(d)) <= 256 * 1024,
      'each document fits the default body limit',
    );
  const ids = byBytes.documents.flatMap((d) => (d.users as { source_id: string }[]).map((u) => u.source_id));
  assert.deepEqual(
    ids,
    bySize.documents.flatMap((d) => (d.users as { source_id: string }[]).map((u) => u.source_id)),
    'same users in the same order',
  );
});
