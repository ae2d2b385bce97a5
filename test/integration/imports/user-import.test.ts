// POST /user-imports (spec doc 2, Migration adapters; Jobs and exports; Limits; docs/migration.md):
// a user.import job that creates accounts with identifiers, memberships with roles, admin metadata
// and imported history; dry runs that write nothing; Idempotency-Key; already_imported and
// skipped_deleted on re-runs; per-record errors; the limits; events and audit per the catalog.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PASSWORD, rows } from '../../harness/signin-kit.ts';
import { auditRows, body, createOrg, outbox } from '../organizations/org-test-kit.ts';
import {
  emailOfRecord,
  footprint,
  importDoc,
  importNow,
  importSetup,
  postImport,
  SOURCE,
  userIdOf,
  userRecord,
  VECTORS,
} from './import-kit.ts';

const bcrypt = VECTORS.bcrypt_2b as { password: string; hash: string };

describe('user import', () => {
  test('case=imports accounts with identifiers, memberships with roles, admin metadata and history; events and audit as the catalog says', async (t) => {
    const s = await importSetup(t);
    const org = await createOrg(s);
    const alice = userRecord({
      given_name: 'Alice',
      locale: 'de',
      password: { format: 'bcrypt', hash: bcrypt.hash },
      memberships: [
        { organization_slug: org.slug.toUpperCase(), roles: ['Member'], external_id: 'kc-group-1' },
      ],
      admin_metadata: { migration: { source_system: SOURCE, source_attributes: { department: ['R&D'] } } },
      audit_events: [
        {
          event_type: 'LOGIN',
          occurred_at: '2025-01-02T03:04:05Z',
          outcome: 'success',
          data: { client: 'app' },
        },
        { event_type: 'LOGIN_ERROR', occurred_at: '2025-02-02T03:04:05Z', outcome: 'failure' },
      ],
    });
    const bob = userRecord({
      identifiers: [
        { type: 'username', value: `bob-${Date.now()}` },
        { type: 'email', value: `bob-${Date.now()}@example.com`, verified: true, primary: true },
      ],
      required_actions: ['update_password'],
    });
    const doc = importDoc([alice, bob], {
      trust_email_verification: true,
      verification_reason: 'verified by the source realm',
    });
    const { jobId, ends, job, report } = await importNow(s, doc);
    assert.deepEqual(ends, { succeeded: 1 });
    assert.equal(job.type, 'user.import');
    assert.deepEqual(job.result.counts, { imported: 2, already_imported: 0, skipped_deleted: 0, failed: 0 });
    assert.deepEqual(
      report.records.map((r: { index: number; status: string }) => [r.index, r.status]),
      [
        [0, 'imported'],
        [1, 'imported'],
      ],
    );
    const aliceId = await userIdOf(s, emailOfRecord(alice));
    assert.equal(report.records[0].user_id, aliceId);

    // The account as the administration API shows it: created_via import, the source's verified flag kept.
    const view = await body(await s.admin.call('GET', `/users/${aliceId}`));
    assert.equal(view.created_via, 'import');
    assert.deepEqual(
      view.identifiers.map((i: { type: string; verified: boolean; primary: boolean }) => [
        i.type,
        i.verified,
        i.primary,
      ]),
      [['email', true, true]],
    );
    const bobView = await body(await s.admin.call('GET', `/users/${report.records[1].user_id}`));
    assert.deepEqual(bobView.required_actions, ['update_password']);
    assert.equal(bobView.identifiers.find((i: { type: string }) => i.type === 'email').primary, true);
    const [stored] = await rows(
      s.h,
      'select attributes, admin_metadata from users where realm_id = $1 and id = $2',
      [s.realm.id, aliceId],
    );
    assert.deepEqual(stored?.attributes, { given_name: 'Alice', locale: 'de' });
    assert.deepEqual(stored?.admin_metadata.migration.source_attributes, { department: ['R&D'] });

    // The membership: active, source import, the role held through it; no membership event.
    const members = await rows(
      s.h,
      `select m.id, m.state, m.source, m.external_id, r.name from memberships m
         join role_assignments a on a.realm_id = m.realm_id and a.membership_id = m.id
         join roles r on r.realm_id = a.realm_id and r.id = a.role_id
        where m.realm_id = $1 and m.user_id = $2`,
      [s.realm.id, aliceId],
    );
    assert.deepEqual(
      members.map((m) => [m.state, m.source, m.external_id, m.name]),
      [['active', 'import', 'kc-group-1', 'member']],
    );
    const created = (await outbox(s, 'user.created')).filter((e) => e.correlation_id === jobId);
    assert.deepEqual(
      created.map((e) => e.data.created_via),
      ['import', 'import'],
    );
    assert.equal(
      (await outbox(s, 'organization.membership.added')).filter((e) => e.correlation_id === jobId).length,
      0,
      'memberships from import jobs emit no event of their own (doc 2, Events)',
    );
    assert.equal(
      (await outbox(s, 'authorization.role.assigned')).filter((e) => e.correlation_id === jobId).length,
      1,
    );
    const audited = (await auditRows(s, 'user.created')).filter((a) => a.correlation_id === jobId);
    assert.equal(audited.length, 2);
    assert.ok(
      audited.every(
        (a) =>
          a.data.created_via === 'import' &&
          a.actor_type === 'system' &&
          a.data.requested_by.id === s.admin.userId,
      ),
    );
    assert.equal((await auditRows(s, 'user.import.requested')).length, 1);
    assert.equal((await auditRows(s, 'user.import.completed'))[0]?.data.imported, 2);
    assert.equal(
      (await auditRows(s, 'organization.membership.added')).filter((a) => a.correlation_id === jobId).length,
      1,
    );

    // Imported history: its own list, newest first, never among the service's audit events.
    const history = await body(await s.admin.call('GET', `/imported-audit-events?user_id=${aliceId}`));
    assert.deepEqual(
      history.items.map((e: { event_type: string; outcome: string; source_system: string }) => [
        e.event_type,
        e.outcome,
        e.source_system,
      ]),
      [
        ['LOGIN_ERROR', 'failure', SOURCE],
        ['LOGIN', 'success', SOURCE],
      ],
    );
    const own = await body(await s.admin.call('GET', `/audit-events?subject_id=${aliceId}`));
    assert.ok(own.items.every((e: { type: string }) => !e.type.startsWith('LOGIN')));
    // The sealed document is gone once the job committed.
    const [imp] = await rows(
      s.h,
      'select document_sealed from user_imports where realm_id = $1 and job_id = $2',
      [s.realm.id, jobId],
    );
    assert.equal(imp?.document_sealed, null);
  });

  test('case=a dry run checks everything, answers every record and writes nothing', async (t) => {
    const s = await importSetup(t);
    const taken = await s.h.createUser(s.realm, { email: 'taken@example.com', password: PASSWORD });
    const ok = userRecord({ password: { format: 'bcrypt', hash: bcrypt.hash } });
    const clash = userRecord({ identifiers: [{ type: 'email', value: 'Taken@example.com' }] });
    const noOrg = userRecord({ memberships: [{ organization_slug: 'no-such-org', roles: ['member'] }] });
    const before = await footprint(s);
    const res = await postImport(s.admin, importDoc([ok, clash, noOrg]), { dryRun: true });
    assert.equal(res.status, 200, await res.clone().text());
    const plan = await body(res);
    assert.equal(plan.dry_run, true);
    assert.deepEqual(plan.counts, { would_import: 1, already_imported: 0, skipped_deleted: 0, failed: 2 });
    assert.deepEqual(
      plan.records.map((r: { status: string }) => r.status),
      ['would_import', 'failed', 'failed'],
    );
    assert.deepEqual(
      plan.records[1].errors.map((e: { member: string; code: string }) => [e.member, e.code]),
      [['users[1].identifiers[0].value', 'identifier_taken']],
    );
    assert.equal(plan.records[1].source_id, clash.source_id);
    assert.deepEqual(
      plan.records[2].errors.map((e: { member: string; code: string }) => [e.member, e.code]),
      [['users[2].memberships[0].organization_slug', 'unknown_organization']],
    );
    assert.deepEqual(await footprint(s), before, 'a dry run writes nothing');
    assert.ok(taken.id);
  });

  test('case=the Idempotency-Key answers the same job; a re-run reports already_imported and an erased account skipped_deleted', async (t) => {
    const s = await importSetup(t);
    const a = userRecord();
    const b = userRecord();
    const doc = importDoc([a, b]);
    const first = await postImport(s.admin, doc, { key: 'batch-0001' });
    assert.equal(first.status, 202);
    const again = await postImport(s.admin, doc, { key: 'batch-0001' });
    assert.equal(again.status, 202);
    const jobId = (await body(first)).job_id;
    assert.equal((await body(again)).job_id, jobId);
    const other = await postImport(s.admin, importDoc([a]), { key: 'batch-0001' });
    assert.equal(other.status, 409, 'the same key for another document');
    const { runJobs } = await import('../exports/exports-kit.ts');
    assert.deepEqual(await runJobs(s), { succeeded: 1 });
    assert.equal((await rows(s.h, 'select 1 from user_imports where realm_id = $1', [s.realm.id])).length, 1);

    const bId = (await userIdOf(s, emailOfRecord(b))) as string;
    assert.equal((await s.admin.call('DELETE', `/users/${bId}`)).status, 204);
    const [ext] = await rows(
      s.h,
      'select source_id, erased_at from user_external_ids where realm_id = $1 and user_id = $2',
      [s.realm.id, bId],
    );
    assert.equal(ext?.source_id, null, 'erasure keeps only the digest of the source id');
    assert.ok(ext?.erased_at);

    const before = await footprint(s);
    const rerun = await importNow(s, doc);
    assert.deepEqual(rerun.job.result.counts, {
      imported: 0,
      already_imported: 1,
      skipped_deleted: 1,
      failed: 0,
    });
    assert.deepEqual(
      rerun.report.records.map((r: { status: string }) => r.status),
      ['already_imported', 'skipped_deleted'],
    );
    const after = await footprint(s);
    assert.equal(after.users, before.users, 'the erased account is not created again');
    const dry = await body(await postImport(s.admin, doc, { dryRun: true }));
    assert.deepEqual(
      dry.records.map((r: { status: string }) => r.status),
      ['already_imported', 'skipped_deleted'],
    );
  });

  test('case=limits: 0 and 1001 users, the body limit and admin_metadata over 16 KiB are refused', async (t) => {
    const s = await importSetup(t);
    const none = await postImport(s.admin, importDoc([]));
    assert.equal(none.status, 422);
    assert.equal((await body(none)).errors[0].field, 'users');
    const many = Array.from({ length: 1001 }, (_, i) => ({
      source_id: `s${i}`,
      identifiers: [{ type: 'username', value: `u${i}` }],
    }));
    const tooMany = await postImport(s.admin, importDoc(many));
    assert.equal(tooMany.status, 422);
    assert.deepEqual(
      (await body(tooMany)).errors.map((e: { field: string; code: string }) => [e.field, e.code]),
      [['users', 'too_many']],
    );
    const thousand = await postImport(s.admin, importDoc(many.slice(0, 1000)), { dryRun: true });
    assert.equal(thousand.status, 200, 'a thousand users is the limit, not past it');
    const padded = importDoc([userRecord({ display_name: 'x'.repeat(200) })], {
      padding: 'x'.repeat(300 * 1024),
    });
    assert.equal((await postImport(s.admin, padded)).status, 413);
    const meta = await postImport(
      s.admin,
      importDoc([userRecord({ admin_metadata: { migration: { blob: 'x'.repeat(17 * 1024) } } })]),
    );
    assert.equal(meta.status, 422);
    assert.deepEqual(
      (await body(meta)).errors.map((e: { field: string; code: string }) => [e.field, e.code]),
      [['users[0].admin_metadata', 'too_long']],
    );
  });

  test('case=invalid records are refused whole with errors naming the record and the member', async (t) => {
    const s = await importSetup(t);
    const good = userRecord();
    const badHash = userRecord({ password: { format: 'bcrypt', hash: '$2x$10$nope' } });
    const seed = userRecord({ totp: { secret: 'JBSWY3DPEHPK3PXP', encoding: 'base32' } });
    const dup = { ...userRecord(), source_id: good.source_id };
    const before = await footprint(s);
    const res = await postImport(s.admin, importDoc([good, badHash, seed, dup]));
    assert.equal(res.status, 422);
    const problem = await body(res);
    assert.equal(problem.code, 'validation_failed');
    assert.deepEqual(
      problem.errors.map((e: { field: string; code: string }) => [e.field, e.code]),
      [
        ['users[1].password.hash', 'invalid'],
        ['users[2].totp', 'import_totp_required'],
        ['users[3].source_id', 'duplicate'],
      ],
    );
    assert.match(problem.errors[0].detail, new RegExp(`record 1 \\(source_id ${badHash.source_id}\\)`));
    assert.deepEqual(await footprint(s), before);
    const unknown = await postImport(s.admin, importDoc([userRecord({ nickname: 'x' })]));
    assert.equal(unknown.status, 400, 'an unknown member is a shape error');
  });
});
