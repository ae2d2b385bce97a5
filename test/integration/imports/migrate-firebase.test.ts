// SuperTokens' Firebase scrypt hashes through the migration adapter (docs/migration.md, The mapping):
// the export's `$f_scrypt$` hash states its salt, rounds, memory cost and salt separator but not the
// project's signer key; with the key in the mapping's password_hash_parameters.firebase_scrypt the
// user comes along and signs in with the old password (Firebase's published example, the vector the
// verifier's own tests use); without it, or with parameters that differ, the hash stays behind.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import {
  adapterNamed,
  buildDocuments,
  conversionReport,
  readMapping,
} from '../../../src/imports/adapters/index.ts';
import { passwordSignIn, rows } from '../../harness/signin-kit.ts';
import { importNow, importSetup, userIdOf, VECTORS, type Vector } from './import-kit.ts';

const FIREBASE = VECTORS.firebase_scrypt as Required<Vector>;
const EXPORT = new URL('../../fixtures/migration/supertokens-12-export.json', import.meta.url);
const IVAN = 'ivan@acme.example';

function convert(mapping: Record<string, unknown>) {
  const adapter = adapterNamed('supertokens');
  assert.ok(adapter);
  const c = adapter.convert([JSON.parse(readFileSync(EXPORT, 'utf8'))], {
    sourceSystem: 'st-test',
    keepAttributes: false,
  });
  const built = buildDocuments(c, readMapping({ format: 'service.migration-mapping.v1', ...mapping }), {
    sourceSystem: 'st-test',
    importTotp: true,
    trustEmailVerification: false,
    allowOwnerRoles: false,
    batchSize: 500,
  });
  const report = conversionReport(adapter, c, 'st-test', built);
  const [doc] = built.documents;
  assert.ok(doc);
  const ivan = (doc.users as Record<string, unknown>[]).find((u) => JSON.stringify(u).includes(IVAN));
  assert.ok(ivan, 'the fixture has the Firebase user');
  return {
    doc,
    ivan,
    report: report as { counts: Record<string, Record<string, number>>; losses: unknown[] },
  };
}

describe('identity-cli migrate-from supertokens › Firebase scrypt', () => {
  test('case=the signer key in the mapping carries the user, who signs in with the old password/mode=headless', async (t) => {
    const { doc, ivan, report } = convert({
      password_hash_parameters: { firebase_scrypt: { signer_key: FIREBASE.parameters.signer_key } },
    });
    assert.deepEqual(ivan.password, { format: 'firebase_scrypt', hash: FIREBASE.hash, salt: FIREBASE.salt });
    assert.deepEqual(doc.password_hash_parameters, { firebase_scrypt: FIREBASE.parameters });
    assert.equal(report.counts.password_verifiers?.not_carried, 0);

    const s = await importSetup(t);
    // Ivan alone, without the tenant memberships this realm has no organizations for.
    const { job } = await importNow(s, { ...doc, users: [{ ...ivan, memberships: undefined }] });
    assert.equal(job.state, 'succeeded', String(job.last_error));
    assert.equal(job.result.counts.imported, 1);
    const userId = (await userIdOf(s, IVAN)) as string;
    const wrong = await passwordSignIn(s.h, s.realm.name, 'web-app', IVAN, 'not-user1password');
    assert.equal(wrong.state.body.status, 'pending');
    const right = await passwordSignIn(s.h, s.realm.name, 'web-app', IVAN, FIREBASE.password);
    assert.equal(right.state.body.status, 'completed', JSON.stringify(right.state.body));
    const [after] = await rows(
      s.h,
      'select hash from password_credentials where realm_id = $1 and user_id = $2',
      [s.realm.id, userId],
    );
    assert.match(after?.hash, /^\$argon2id\$/, 're-hashed at the first sign-in');
  });

  test('case=without the key, or with other parameters, the hash stays behind with the reason/mode=offline', () => {
    const none = convert({});
    assert.equal(none.ivan.password, undefined);
    assert.equal(none.doc.password_hash_parameters, undefined);
    assert.equal(none.report.counts.password_verifiers?.not_carried, 1);
    assert.match(JSON.stringify(none.report.losses), /signer key: give it in the mapping/);

    const other = convert({
      password_hash_parameters: {
        firebase_scrypt: { signer_key: FIREBASE.parameters.signer_key, rounds: 9 },
      },
    });
    assert.equal(other.ivan.password, undefined);
    assert.match(JSON.stringify(other.report.losses), /differ from the project's/);
    assert.throws(
      () =>
        readMapping({
          format: 'service.migration-mapping.v1',
          password_hash_parameters: { firebase_scrypt: { signer_key: 'not base64!' } },
        }),
      /signer key/,
    );
  });
});
