// The plan and apply stages of identity-cli migrate-from against a running server (spec doc 2,
// "Migration adapters" rules 2 to 4; docs/migration.md): organizations reused by external id or
// by the mapping's slug, conflicts and missing roles found before anything is written, dry-run
// imports for a plan, batches imported one job at a time for an apply, and a reconciliation.
import { createHash, randomUUID } from 'node:crypto';
import {
  type Built,
  type Conversion,
  type Mapping,
  type OrganizationPlan,
  planOrganizations,
} from '../../../imports/adapters/index.ts';
import type { MigrationApi } from '../migration-api.ts';

type Body = Record<string, unknown>;

/** Rule 2 against the realm's organizations, read through the API. */
export async function planOrganizationsOf(api: MigrationApi, c: Conversion, mapping: Mapping) {
  const existing = (await api.all('/organizations')).map((o) => ({
    id: String(o.id),
    slug: String(o.slug),
    externalId: o.external_id ? String(o.external_id) : null,
  }));
  const byExternal = new Map(existing.filter((o) => o.externalId).map((o) => [o.externalId, o]));
  const bySlug = new Map(existing.map((o) => [o.slug.toLowerCase(), o]));
  return planOrganizations(
    c,
    mapping,
    (ext) => byExternal.get(ext),
    (slug) => bySlug.get(slug),
  );
}

/** Rule 2: mapped roles must exist as realm-wide roles (names compared ignoring case). */
export async function missingRoles(api: MigrationApi, built: Built): Promise<string[]> {
  const names = new Set((await api.all('/roles')).map((r) => String(r.name).toLowerCase()));
  return built.mappedRoles.filter((r) => !names.has(r));
}

/**
 * Each batch's Idempotency-Key: the run's random id, the batch number and the batch's digest.
 * Retries of a batch send it again; a new run posts new jobs, whose records then report
 * already_imported (rule 3).
 */
export const batchKey = (runId: string, index: number, doc: Body): string =>
  `migrate-${runId}-${index}-${createHash('sha256').update(JSON.stringify(doc)).digest('hex').slice(0, 16)}`;

const add = (into: Record<string, number>, counts: unknown) => {
  for (const [k, v] of Object.entries((counts ?? {}) as Record<string, number>))
    if (typeof v === 'number') into[k] = (into[k] ?? 0) + v;
};

/** A plan: every batch as a dry run, memberships of organizations still to be created left out. */
export async function dryRun(api: MigrationApi, built: Built, toCreate: ReadonlySet<string>) {
  const counts: Record<string, number> = {};
  const failures: Body[] = [];
  for (const doc of built.documents) {
    const users = (doc.users as Body[]).map((u) => {
      const memberships = (u.memberships as Body[] | undefined)?.filter(
        (m) => !toCreate.has(String(m.organization_external_id ?? '')),
      );
      return memberships === undefined ? u : { ...u, memberships };
    });
    const r = await api.ok('POST', '/user-imports?dry_run=true', { ...doc, users });
    add(counts, r.counts);
    for (const rec of (r.records as Body[] | undefined) ?? [])
      if (rec.status === 'failed' && failures.length < 100) failures.push(rec);
  }
  return { counts, failures };
}

export interface BatchOutcome {
  index: number;
  users: number;
  idempotency_key: string;
  job_id: string;
  state: string;
  counts?: unknown;
  last_error?: unknown;
}

/** An apply: creates the planned organizations, then imports batch after batch (rule 3). */
export async function applyBatches(
  api: MigrationApi,
  c: Conversion,
  built: Built,
  orgs: OrganizationPlan[],
  batches: BatchOutcome[],
) {
  const names = new Map(c.organizations.map((o) => [o.externalId, o.displayName]));
  for (const o of orgs.filter((x) => x.action === 'create')) {
    const created = await api.ok('POST', '/organizations', {
      slug: o.slug,
      display_name: names.get(o.external_id) ?? o.slug,
      external_id: o.external_id,
    });
    o.organization_id = String(created.id);
  }
  const counts: Record<string, number> = {};
  const runId = randomUUID();
  for (const [index, doc] of built.documents.entries()) {
    const key = batchKey(runId, index, doc);
    const queued = await api.ok('POST', '/user-imports', doc, { 'idempotency-key': key });
    const jobId = String(queued.job_id);
    const job = await api.waitForJob(jobId);
    const outcome: BatchOutcome = {
      index,
      users: (doc.users as unknown[]).length,
      idempotency_key: key,
      job_id: jobId,
      state: String(job.state),
    };
    batches.push(outcome);
    if (job.state !== 'succeeded') {
      outcome.last_error = job.last_error ?? null;
      return { counts, stopped: `batch ${index} ended ${String(job.state)}` };
    }
    const report = await api.ok('GET', `/user-imports/${jobId}`);
    outcome.counts = report.counts;
    add(counts, report.counts);
  }
  return { counts, stopped: null };
}

/** Rule 4: the converted export's counts against what the realm holds. */
export async function reconcile(api: MigrationApi, sourceSystem: string, built: Built): Promise<Body> {
  const q = new URLSearchParams({ source_system: sourceSystem, sample: '20' });
  for (const [k, v] of Object.entries(built.expected)) q.set(k, String(v));
  return api.ok('GET', `/user-imports/reconciliation?${q.toString()}`);
}
