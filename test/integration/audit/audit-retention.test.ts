// Audit retention and the archive (spec doc 2, Data lifecycle 1; docs/audit.md): per-category
// retention, realm and organization extensions, the emergency category, legal holds (active and
// released), unsealed events, and the write-once archive that must precede pruning.
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import type { AuditCategory } from '../../../src/audit/audit.types.ts';
import { recordAudit } from '../../../src/audit/index.ts';
import { SYSTEM_ACTOR } from '../../../src/kernel/call.ts';
import { TASKS, type WorkerDeps } from '../../../src/main/worker/tasks.ts';
import { startWorker, workerDeps } from '../../../src/main/worker/worker.ts';
import { cleanupAuditRetention } from '../../../src/ops/audit-retention.task.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { type Harness, type HarnessOptions, startHarness } from '../../harness/harness.ts';
import { rows } from '../../harness/signin-kit.ts';

const DAY = 24 * 3600 * 1000;

interface Evt {
  realmId: string;
  category: AuditCategory;
  subject?: string;
  orgId?: string;
}

/** One audit record of our own, so the test knows every fact retention looks at. */
async function evidence(h: Harness, e: Evt): Promise<string> {
  return h.ctx.db.tx((tx) =>
    recordAudit(
      tx,
      {
        realmId: e.realmId,
        type: 'user.updated',
        category: e.category,
        actor: SYSTEM_ACTOR,
        ...(e.subject ? { subject: { type: 'user', id: e.subject } } : {}),
        ...(e.orgId ? { orgId: e.orgId } : {}),
      },
      h.clock.now(),
    ),
  );
}

const task = (name: string) => {
  const found = TASKS.find((x) => x.name === name);
  if (!found) throw new Error(`no task ${name}`);
  return found;
};

async function setup(t: TestContext, opts: HarnessOptions = {}) {
  const h = await startHarness(t, opts);
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  const worker = startWorker(h.ctx, { autostart: false });
  t.after(() => worker.stop());
  const deps: WorkerDeps = workerDeps(h.ctx);
  const retainAt = (days: number) =>
    cleanupAuditRetention(deps, new Date(h.clock.now().getTime() + days * DAY));
  const alive = async (ids: string[]) =>
    new Set(
      (await rows(h, 'select id from audit_events where id = any($1::text[])', [ids])).map(
        (r) => r.id as string,
      ),
    );
  return { h, realm, admin, worker, retainAt, alive };
}

describe('audit › retention', () => {
  test('case=retention honours categories, extensions, emergency, holds and unsealed events', async (t) => {
    const { h, realm, admin, worker, retainAt, alive } = await setup(t, {
      overrides: { 'privacy.audit_retention_by_category': 'data_access=30d' },
    });
    const org = await admin.call('POST', '/organizations', {
      slug: 'long-memory',
      display_name: 'Long memory',
      policy: { audit_retention_days: 600 },
    });
    assert.equal(org.status, 201);
    const orgId = ((await org.json()) as { id: string }).id;
    const longRealm = await h.createRealm();
    await h.setPolicy(longRealm, { audit: { retention_days: 500 } });

    assert.equal(
      (await admin.call('POST', '/audit-legal-holds', { reason: 'litigation', subject_id: 'usr_held' }))
        .status,
      201,
    );
    assert.equal(
      (await admin.call('POST', '/audit-legal-holds', { reason: 'regulator', organization_id: 'org_held' }))
        .status,
      201,
    );
    const released = await admin.call('POST', '/audit-legal-holds', {
      reason: 'settled case',
      subject_id: 'usr_free',
    });
    const releasedId = ((await released.json()) as { id: string }).id;
    assert.equal((await admin.call('POST', `/audit-legal-holds/${releasedId}/release`)).status, 200);

    const ids = {
      held: await evidence(h, { realmId: realm.id, category: 'identity', subject: 'usr_held' }),
      plain: await evidence(h, { realmId: realm.id, category: 'identity', subject: 'usr_plain' }),
      emergency: await evidence(h, { realmId: realm.id, category: 'emergency' }),
      dataAccess: await evidence(h, { realmId: realm.id, category: 'data_access' }),
      orgLong: await evidence(h, { realmId: realm.id, category: 'identity', orgId }),
      orgHeld: await evidence(h, { realmId: realm.id, category: 'identity', orgId: 'org_held' }),
      releasedHold: await evidence(h, { realmId: realm.id, category: 'identity', subject: 'usr_free' }),
      realmLong: await evidence(h, { realmId: longRealm.id, category: 'identity' }),
    };
    const all = Object.values(ids);

    // Nothing sealed yet: nothing is pruned, however old.
    await retainAt(4000);
    assert.equal((await alive(all)).size, all.length, 'unsealed events are never pruned');

    await worker.scheduler.runOnce(task('audit.seal'));
    const unsealed = await evidence(h, { realmId: realm.id, category: 'identity' });

    await retainAt(31);
    let left = await alive([...all, unsealed]);
    assert.ok(!left.has(ids.dataAccess), 'data_access kept 30 days by its category setting');
    assert.ok(left.has(ids.plain), 'other categories keep the 400-day default');

    await retainAt(401);
    left = await alive([...all, unsealed]);
    assert.ok(!left.has(ids.plain));
    assert.ok(!left.has(ids.releasedHold), 'a released hold holds nothing');
    assert.ok(left.has(ids.held), 'held by subject');
    assert.ok(left.has(ids.orgHeld), 'held by organization');
    assert.ok(left.has(ids.emergency));
    assert.ok(left.has(ids.orgLong), 'the organization extends to 600 days');
    assert.ok(left.has(ids.realmLong), 'the realm extends to 500 days');
    assert.ok(left.has(unsealed));

    await retainAt(601);
    left = await alive([...all, unsealed]);
    assert.ok(!left.has(ids.orgLong));
    assert.ok(!left.has(ids.realmLong));
    assert.deepEqual(
      [...left].sort(),
      [ids.held, ids.orgHeld, ids.emergency, unsealed].sort(),
      'only held, emergency and unsealed events outlive every retention',
    );

    // Pruning is counted on the batch, so the chain still verifies.
    assert.equal((await worker.scheduler.runOnce(task('audit.verify_recent')))?.problems, 0);
    const pruned = await rows(h, 'select sum(pruned_count)::int as n from audit_batches');
    assert.ok(Number(pruned[0]?.n) >= 6);
  });

  test('case=audit.retention_days set through PUT /settings counts at least 30 days and never shortens', async (t) => {
    const { h, realm, admin, worker, retainAt, alive } = await setup(t, {
      overrides: { 'privacy.audit_retention_by_category': 'data_access=30d' },
    });
    const other = await h.createRealm();
    const otherAdmin = await apiCaller(h, other);
    for (const [caller, days] of [
      [admin, 10],
      [otherAdmin, 60],
    ] as const) {
      const put = await caller.call('PUT', '/settings', { policy: { audit: { retention_days: days } } });
      assert.equal(put.status, 200, await put.text());
    }
    const ids = {
      // 10 days counts as 30, which does not shorten the 400-day default of other categories.
      identity: await evidence(h, { realmId: realm.id, category: 'identity' }),
      // ...and extends nothing past the 30 days of data_access.
      shortAccess: await evidence(h, { realmId: realm.id, category: 'data_access' }),
      // 60 days extends data_access beyond its 30.
      longAccess: await evidence(h, { realmId: other.id, category: 'data_access' }),
    };
    await worker.scheduler.runOnce(task('audit.seal'));
    await retainAt(31);
    let left = await alive(Object.values(ids));
    assert.deepEqual(
      [left.has(ids.identity), left.has(ids.shortAccess), left.has(ids.longAccess)],
      [true, false, true],
    );
    await retainAt(61);
    left = await alive(Object.values(ids));
    assert.deepEqual([left.has(ids.identity), left.has(ids.longAccess)], [true, false]);
  });
});

describe('audit › archive', () => {
  test('case=with an archive directory, only archived batches are pruned; files are written once', async (t) => {
    const dir = await mkdtemp(join(tmpdir(), 'proudauth-archive-'));
    const { h, realm, worker, retainAt, alive } = await setup(t, {
      overrides: { 'privacy.audit_archive_dir': dir },
    });
    const id = await evidence(h, { realmId: realm.id, category: 'identity', subject: 'usr_archived' });
    await worker.scheduler.runOnce(task('audit.seal'));
    await retainAt(401);
    assert.ok((await alive([id])).has(id), 'not archived yet: kept');

    assert.ok(((await worker.scheduler.runOnce(task('audit.archive')))?.archived ?? 0) >= 1);
    const files = (await readdir(dir)).filter((f) => f.endsWith('.ndjson'));
    const batches = await rows(h, 'select id, seq, batch_hash, archived_at from audit_batches order by seq');
    assert.equal(files.length, batches.length, 'one file per sealed batch');
    assert.ok(batches.every((b) => b.archived_at !== null));
    const [{ batch_id: batchId }] = (await rows(h, 'select batch_id from audit_events where id = $1', [
      id,
    ])) as [{ batch_id: string }];
    const file = files.find((f) => f.includes(batchId));
    assert.ok(file);
    const path = join(dir, file);
    assert.equal((await stat(path)).mode & 0o222, 0, 'written once: no write permission');
    const lines = (await readFile(path, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.equal(lines[0].record, 'batch');
    assert.equal(lines[0].id, batchId);
    const line = lines.find((l) => l.id === id);
    assert.equal(line?.record, 'event');
    assert.match(line?.content_hash, /^[0-9a-f]{64}$/);

    assert.deepEqual(await worker.scheduler.runOnce(task('audit.archive')), { archived: 0 }, 'nothing twice');
    await retainAt(401);
    assert.ok(!(await alive([id])).has(id), 'archived: pruned');
  });
});
