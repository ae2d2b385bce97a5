// The audit export (spec doc 2, Jobs and exports; Audit records; Limits): one organization's records
// of a window, newest first across pages of 500, each with its content hash.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { contentHash } from '../../../src/audit/index.ts';
import { AUDIT_EXPORT_MAX_PAGES, AUDIT_EXPORT_PAGE } from '../../../src/exports/audit-export.job.ts';
import { createOrg, HOUR, type OrgSetup, setup } from '../organizations/org-test-kit.ts';
import { download, keysOf, requestExport, runJobs } from './exports-kit.ts';

const EVENT_FIELDS = [
  'actor',
  'category',
  'content_hash',
  'correlation_id',
  'corrects_event_id',
  'data',
  'id',
  'occurred_at',
  'organization_id',
  'outcome',
  'reason',
  'signal',
  'subject',
  'target',
  'type',
];

/** `n` records of `orgId`, one second apart from `start`, with ids in time order. */
async function seedEvents(s: OrgSetup, orgId: string, start: Date, n: number, tag: string) {
  await s.h.ctx.db.query(
    `insert into audit_events (id, realm_id, occurred_at, type, category, outcome, actor_type, actor_id, org_id, data)
     select 'aud_' || $5 || lpad(g::text, 8, '0'), $1, $3::timestamptz + make_interval(secs => g), 'test.event',
            'operations', 'success', 'system', null, $2, '{}'
       from generate_series(1, $4::int) g`,
    [s.realm.id, orgId, start, n, tag],
  );
}

describe('exports › audit', () => {
  test('case=newest first over several pages, only the organization and window asked for, each with its hash', async (t) => {
    assert.equal(AUDIT_EXPORT_PAGE, 500);
    assert.equal(AUDIT_EXPORT_MAX_PAGES, 2000);
    const s = await setup(t);
    const a = await createOrg(s);
    const b = await createOrg(s);
    const now = s.clock.now().getTime();
    const from = new Date(now - 2 * HOUR);
    const to = new Date(now - HOUR);
    await seedEvents(s, a.id, from, 1200, 'a0');
    await seedEvents(s, b.id, from, 5, 'b0');
    await seedEvents(s, a.id, new Date(now - 3 * HOUR), 5, '00');
    // A sealed record keeps the hash it was sealed with.
    await s.h.ctx.db.query(`update audit_events set content_hash = $1 where id = 'aud_a000000007'`, [
      'f'.repeat(64),
    ]);

    const jobId = await requestExport(s.admin, '/audit-exports', {
      organization_id: a.id,
      from: from.toISOString(),
      to: to.toISOString(),
    });
    const row = await s.h.ctx.db.query<{ organization_id: string }>(
      'select organization_id from jobs where id = $1',
      [jobId],
    );
    assert.equal(
      row.rows[0]?.organization_id,
      a.id,
      'the job counts toward the organization (tenant fairness)',
    );
    assert.deepEqual(await runJobs(s), { succeeded: 1 });
    const file = await download(s.admin, jobId);
    assert.equal(file.contentType, 'application/x-ndjson');
    assert.equal(file.disposition, 'attachment; filename="export.ndjson"');
    const events = file.text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(events.length, 1200);
    const ids = events.map((e) => String(e.id));
    assert.deepEqual(ids, [...ids].sort().reverse(), 'newest first');
    for (const e of events) {
      assert.deepEqual(keysOf(e), [...EVENT_FIELDS].sort());
      assert.equal(e.organization_id, a.id);
      assert.match(String(e.content_hash), /^[0-9a-f]{64}$/);
    }
    assert.equal(events.find((e) => e.id === 'aud_a000000007')?.content_hash, 'f'.repeat(64));
    // An unsealed record carries the hash sealing will give it.
    const [stored] = (await s.h.ctx.db.query('select * from audit_events where id = $1', ['aud_a000000001']))
      .rows;
    assert.equal(events.find((e) => e.id === 'aud_a000000001')?.content_hash, contentHash(stored as never));
  });

  test('case=the request is checked: dates, order, organization, permission and a recent sign-in', async (t) => {
    const s = await setup(t);
    const org = await createOrg(s);
    const at = (ms: number) => new Date(s.clock.now().getTime() + ms).toISOString();
    const bad = await s.admin.call('POST', '/audit-exports', {
      organization_id: org.id,
      from: 'yesterday',
      to: at(0),
    });
    assert.equal(bad.status, 422);
    const reversed = await s.admin.call('POST', '/audit-exports', {
      organization_id: org.id,
      from: at(0),
      to: at(-1),
    });
    assert.equal(reversed.status, 422);
    const unknown = await s.admin.call('POST', '/audit-exports', {
      organization_id: 'org_00000000000000000000000000',
      from: at(-HOUR),
      to: at(0),
    });
    assert.equal(unknown.status, 404);
    const extra = await s.admin.call('POST', '/audit-exports', { from: at(-HOUR), to: at(0), format: 'csv' });
    assert.equal(extra.status, 400);
    s.clock.advance(11 * 60_000);
    const stale = await s.admin.call('POST', '/audit-exports', { from: at(-HOUR), to: at(0) });
    assert.equal(stale.status, 403);
    assert.equal(((await stale.json()) as { code: string }).code, 'step_up_required');
  });
});
