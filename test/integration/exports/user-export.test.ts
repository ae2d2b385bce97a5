// The personal data export (spec doc 2, Personal data export; Jobs and exports): requested by the
// user with an account token and a recent sign-in, fetched under /me, one JSON document with the
// spec's parts and no credential material.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { seedMembership } from '../../harness/org-kit.ts';
import { accountCaller, createOrg, newUser, setup } from '../organizations/org-test-kit.ts';
import {
  download,
  keysOf,
  memberNames,
  PASSKEY_MARKER,
  requestExport,
  runJobs,
  SECRET_MEMBER,
  seedPasskey,
} from './exports-kit.ts';

const TOP = [
  'consents',
  'credentials',
  'format',
  'generated_at',
  'identifiers',
  'imported_audit_records',
  'linked_identities',
  'memberships',
  'passkeys',
  'profile',
  'security_events',
  'sessions',
  'terms_acceptances',
];

describe('exports › personal data', () => {
  test('case=the user exports their own data under /me; the file has the spec parts and no secrets', async (t) => {
    const s = await setup(t);
    const userId = await newUser(s);
    const now = s.clock.now();
    const db = s.h.ctx.db;
    await db.query(
      `insert into terms_acceptances (realm_id, user_id, version, accepted_at) values ($1, $2, '2026-01', $3)`,
      [s.realm.id, userId, now],
    );
    const org = await createOrg(s);
    await seedMembership(s.h, s.realm, org.id, userId);
    // Signed in before the authenticator is stored, so the sign-in asks for the password only.
    const user = await accountCaller(s, userId);
    await db.query(
      `insert into totp_credentials (realm_id, user_id, secret_sealed, created_at) values ($1, $2, 'TOTP-SEED-MARKER', $3)`,
      [s.realm.id, userId, now],
    );
    await seedPasskey(db, s.realm.id, userId, 'Laptop', now);

    const jobId = await requestExport(user, '/me/exports');
    assert.deepEqual(await runJobs(s), { succeeded: 1 });
    // The spec's flow (GET /jobs/{id}, POST /jobs/{id}/downloads, POST /job-downloads) with the
    // user's own token; the same job is also under /me.
    const file = await download(user, jobId);
    assert.equal((await user.call('GET', `/me/jobs/${jobId}`)).status, 200);
    assert.equal(file.contentType, 'application/json');
    assert.equal(file.disposition, 'attachment; filename="export.json"');
    const doc = JSON.parse(file.text) as Record<string, unknown>;
    assert.deepEqual(keysOf(doc), TOP);
    assert.equal(doc.format, 'service.user-export.v1');
    assert.equal((doc.profile as { id: string }).id, userId);
    const identifiers = doc.identifiers as Record<string, unknown>[];
    assert.ok(identifiers.length > 0);
    for (const i of identifiers) assert.deepEqual(keysOf(i), ['primary', 'type', 'value', 'verified']);
    assert.deepEqual(
      (doc.credentials as { type: string }[]).map((c) => c.type).sort(),
      ['password', 'totp'],
      'credential metadata: which and when',
    );
    assert.deepEqual(
      (doc.memberships as { organization_id: string }[]).map((m) => m.organization_id),
      [org.id],
    );
    assert.ok(
      (doc.sessions as { id: string }[]).some((x) => x.id === user.sessionId),
      'the active session',
    );
    assert.deepEqual(
      (doc.terms_acceptances as { version: string }[]).map((x) => x.version),
      ['2026-01'],
    );
    const events = doc.security_events as { id: string }[];
    assert.ok(events.length <= 500);
    const ids = events.map((e) => e.id);
    assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first');
    assert.deepEqual(doc.imported_audit_records, []);

    for (const n of memberNames(doc)) assert.doesNotMatch(n, SECRET_MEMBER, `member ${n}`);
    assert.ok(!file.text.includes('TOTP-SEED-MARKER'));
    assert.deepEqual(doc.passkeys, [{ name: 'Laptop', created_at: now.toISOString(), last_used_at: null }]);
    assert.ok(!file.text.includes(PASSKEY_MARKER), 'no passkey credential id or key');
    const hash = await db.query<{ hash: string }>(
      'select hash from password_credentials where realm_id = $1 and user_id = $2',
      [s.realm.id, userId],
    );
    assert.ok(!file.text.includes(String(hash.rows[0]?.hash)), 'no password verifier');
  });

  test('case=only the requester sees the job; the export needs a recent sign-in', async (t) => {
    const s = await setup(t);
    const user = await accountCaller(s, await newUser(s));
    const other = await accountCaller(s, await newUser(s));
    const jobId = await requestExport(user, '/me/exports');
    assert.equal((await other.call('GET', `/me/jobs/${jobId}`)).status, 404);
    assert.equal((await other.call('POST', `/me/jobs/${jobId}/downloads`)).status, 404);
    assert.equal((await other.call('GET', `/jobs/${jobId}`)).status, 404);
    assert.equal((await other.call('POST', `/jobs/${jobId}/downloads`)).status, 404);
    // The admin export routes do not take an account token.
    assert.equal((await user.call('POST', '/data-exports')).status, 401);
    s.clock.advance(11 * 60_000);
    const stale = await user.call('POST', '/me/exports');
    assert.equal(stale.status, 403);
    assert.equal(((await stale.json()) as { code: string }).code, 'step_up_required');
  });

  test('case=an administration job is not served under /me', async (t) => {
    const s = await setup(t);
    const jobId = await requestExport(s.admin, '/data-exports');
    await runJobs(s);
    const self = await accountCaller(s, s.admin.userId);
    assert.equal((await self.call('GET', `/me/jobs/${jobId}`)).status, 404);
    assert.equal((await self.call('POST', `/me/jobs/${jobId}/downloads`)).status, 404);
    // An account token reaches only the personal export on the administration paths too.
    assert.equal((await self.call('GET', `/jobs/${jobId}`)).status, 404);
    assert.equal((await self.call('POST', `/jobs/${jobId}/downloads`)).status, 404);
    const issued = await s.admin.call('POST', `/jobs/${jobId}/downloads`);
    const { download_token } = (await issued.json()) as { download_token: string };
    assert.equal((await self.call('POST', '/me/job-downloads', { download_token })).status, 400);
    assert.equal(
      (await s.admin.call('POST', '/job-downloads', { download_token })).status,
      200,
      'still usable',
    );
  });
});
