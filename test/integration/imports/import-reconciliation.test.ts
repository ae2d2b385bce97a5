// After an import (docs/migration.md): the reconciliation compares expected counts with what the
// realm holds and samples the stored verifiers and seeds; imported history leaves by its own
// retention (spec doc 2, Data lifecycle 1) and reaches the personal data export, newest first.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import { cleanupAuditRetention } from '../../../src/ops/audit-retention.task.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { rows } from '../../harness/signin-kit.ts';
import { download, requestExport, runJobs } from '../exports/exports-kit.ts';
import { body, createOrg, DAY } from '../organizations/org-test-kit.ts';
import {
  emailOfRecord,
  importDoc,
  importNow,
  importSetup,
  SOURCE,
  userIdOf,
  userRecord,
  VECTORS,
  type Vector,
} from './import-kit.ts';

const vec = (name: string) => VECTORS[name] as Vector;

describe('user import › reconciliation and history', () => {
  test('case=the reconciliation matches expected counts, names mismatches and proves the sampled verifiers and seeds', async (t) => {
    const s = await importSetup(t);
    const org = await createOrg(s);
    const totp = { secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', encoding: 'base32', algorithm: 'SHA256' };
    const fb = vec('firebase_scrypt');
    const users = [
      userRecord({
        password: { format: 'bcrypt', hash: vec('bcrypt_2y').hash },
        totp,
        memberships: [{ organization_id: org.id, roles: ['member'] }],
      }),
      userRecord({
        password: {
          format: 'keycloak',
          credential_data: vec('keycloak_pbkdf2-sha512').credential_data,
          secret_data: vec('keycloak_pbkdf2-sha512').secret_data,
        },
      }),
      userRecord({ password: { format: 'phc', hash: vec('phc_scrypt').hash } }),
      userRecord({ password: { format: 'firebase_scrypt', hash: fb.hash, salt: fb.salt } }),
      userRecord(),
    ];
    const { job } = await importNow(
      s,
      importDoc(users, { import_totp: true, password_hash_parameters: { firebase_scrypt: fb.parameters } }),
    );
    assert.equal(job.state, 'succeeded', String(job.last_error));
    const expected =
      'expected_users=5&expected_memberships=1&expected_password_verifiers=4&expected_totp_factors=1';
    const ok = await body(
      await s.admin.call('GET', `/user-imports/reconciliation?source_system=${SOURCE}&${expected}`),
    );
    assert.equal(ok.matches, true, JSON.stringify(ok));
    assert.deepEqual(ok.imported, {
      users: 5,
      deleted_locally: 0,
      memberships: 1,
      password_verifiers: 4,
      totp_factors: 1,
    });
    assert.equal(ok.proof.holds, true, JSON.stringify(ok.proof));
    assert.equal(ok.proof.password_verifiers.sampled, 4);
    assert.deepEqual(Object.keys(ok.proof.password_verifiers.schemes).sort(), [
      'bcrypt',
      'firebase-scrypt',
      'pbkdf2-sha512',
      'scrypt',
    ]);
    assert.deepEqual(ok.proof.password_verifiers.self_tests, {
      bcrypt: true,
      pbkdf2: true,
      scrypt: true,
      'firebase-scrypt': true,
    });
    assert.deepEqual(ok.proof.totp_factors.self_tests, { SHA256: true });
    assert.equal(ok.proof.totp_factors.verified_parameters, 1);

    // An account erased locally still counts as carried over; a missing one is a mismatch.
    const gone = (await userIdOf(s, emailOfRecord(users[4] as Record<string, unknown>))) as string;
    assert.equal((await s.admin.call('DELETE', `/users/${gone}`)).status, 204);
    const short = await body(
      await s.admin.call(
        'GET',
        `/user-imports/reconciliation?source_system=${SOURCE}&expected_users=6&expected_totp_factors=1`,
      ),
    );
    assert.equal(short.matches, false);
    assert.deepEqual(short.mismatches, [{ name: 'users', expected: 6, imported: 5 }]);
    assert.equal(short.imported.deleted_locally, 1);

    // A verifier damaged in storage is named by the sample, and never signs anyone in.
    const damaged = (await userIdOf(s, emailOfRecord(users[2] as Record<string, unknown>))) as string;
    await s.h.ctx.db.query(
      `update password_credentials set hash = replace(hash, '"ln":14', '"ln":99') where realm_id = $1 and user_id = $2`,
      [s.realm.id, damaged],
    );
    const broken = await body(
      await s.admin.call('GET', `/user-imports/reconciliation?source_system=${SOURCE}&sample=100`),
    );
    assert.equal(broken.proof.holds, false);
    assert.deepEqual(
      broken.proof.password_verifiers.failures.map((f: { user_id: string }) => f.user_id),
      [damaged],
    );
    assert.equal(
      (await s.admin.call('GET', '/user-imports/reconciliation')).status,
      422,
      'source_system is required',
    );
    const viewer = await apiCaller(s.h, s.realm, { roles: [] });
    assert.equal(
      (await viewer.call('GET', `/user-imports/reconciliation?source_system=${SOURCE}`)).status,
      403,
    );
  });

  test('case=imported history reaches the personal export newest first and leaves after its retention from import time', async (t) => {
    const s = await importSetup(t, { 'privacy.audit_retention_by_category': 'imported=30d' });
    const record = userRecord({
      password: { format: 'bcrypt', hash: vec('bcrypt_2b').hash },
      audit_events: [
        { event_type: 'LOGIN', occurred_at: '2019-05-01T10:00:00Z', outcome: 'success' },
        { event_type: 'UPDATE_PASSWORD', occurred_at: '2020-05-01T10:00:00+02:00', outcome: 'success' },
        { event_type: 'LOGIN_ERROR', occurred_at: '2018-05-01T10:00:00Z', outcome: 'failure' },
      ],
    });
    await importNow(s, importDoc([record]));
    const userId = (await userIdOf(s, emailOfRecord(record))) as string;
    const user = await apiCaller(s.h, s.realm, {
      audience: 'account',
      userId,
      password: vec('bcrypt_2b').password,
    });
    const jobId = await requestExport(user, '/me/exports');
    assert.deepEqual(await runJobs(s), { succeeded: 1 });
    const file = JSON.parse((await download(user, jobId)).text);
    assert.deepEqual(
      file.imported_audit_records.map((r: { event_type: string }) => r.event_type),
      ['UPDATE_PASSWORD', 'LOGIN', 'LOGIN_ERROR'],
    );
    assert.deepEqual(Object.keys(file.imported_audit_records[0]).sort(), [
      'event_type',
      'occurred_at',
      'outcome',
      'source_system',
    ]);

    // Kept while younger than the imported category's 30 days (counted from the import, not from
    // occurred_at, which is years old), deleted after.
    const deps = workerDeps(s.h.ctx);
    const count = async () =>
      Number(
        (
          await rows(s.h, 'select count(*)::int as n from imported_audit_events where realm_id = $1', [
            s.realm.id,
          ])
        )[0]?.n,
      );
    const early = await cleanupAuditRetention(deps, new Date(s.h.clock.now().getTime() + 29 * DAY));
    assert.equal(early.imported_deleted, 0);
    assert.equal(await count(), 3);
    const late = await cleanupAuditRetention(deps, new Date(s.h.clock.now().getTime() + 31 * DAY));
    assert.ok((late.imported_deleted ?? 0) >= 3);
    assert.equal(await count(), 0);
  });
});
