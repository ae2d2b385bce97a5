// The user import API under /api/v1/realms/{realm} (spec doc 2, Migration adapters: APIs used;
// Audit endpoints: GET /imported-audit-events; docs/migration.md).
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { type ImportedAuditEventRow, listImportedAuditEvents } from '../audit/index.ts';
import { idempotencyKeyOf } from '../jobs/index.ts';
import { problem } from '../platform/http/problem.ts';
import { decodePageQuery, pageOf } from '../roles/list-query.ts';
import { EXPECTED, reconcile } from './reconciliation.ts';
import { IMPORT_PERMISSION } from './user-import.authority.ts';
import { SOURCE_SYSTEM } from './user-import.format.ts';
import { findUserImport } from './user-imports.repo.ts';
import { dryRunImport, queueImport } from './user-imports.service.ts';

const IMPORT = { audience: 'admin', permissions: [IMPORT_PERMISSION] } as const;
// Imported history is read as the service's own audit events are (docs/decisions.md).
const READ_HISTORY = { audience: 'admin', permissions: ['realm.audit.export'] } as const;

function dryRunOf(req: FastifyRequest): boolean {
  const q = (req.query ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(q))
    if (k !== 'dry_run') throw problem.invalidRequest(`unknown query parameter ${k.slice(0, 64)}`);
  const dry = q.dry_run ?? 'false';
  if (dry !== 'true' && dry !== 'false') throw problem.invalidRequest('dry_run is true or false');
  return dry === 'true';
}

const SOURCE_RE = new RegExp(`^(?:${SOURCE_SYSTEM.source})$`);
const MAX_SAMPLE = 100;

function reconciliationQuery(raw: unknown) {
  const q = (raw ?? {}) as Record<string, unknown>;
  const known = new Set(['source_system', 'sample', ...EXPECTED.map((n) => `expected_${n}`)]);
  for (const k of Object.keys(q))
    if (!known.has(k)) throw problem.invalidRequest(`unknown query parameter ${k.slice(0, 64)}`);
  const count = (name: string, max: number): number | undefined => {
    const v = q[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string' || !/^\d{1,9}$/.test(v) || Number(v) > max)
      throw problem.validation([{ field: name, code: 'invalid', detail: `an integer from 0 to ${max}` }]);
    return Number(v);
  };
  const source = q.source_system;
  if (typeof source !== 'string' || !SOURCE_RE.test(source))
    throw problem.validation([
      { field: 'source_system', code: 'required', detail: 'the source system of the import' },
    ]);
  const expected: Partial<Record<(typeof EXPECTED)[number], number>> = {};
  for (const n of EXPECTED) {
    const v = count(`expected_${n}`, 100_000_000);
    if (v !== undefined) expected[n] = v;
  }
  return { sourceSystem: source, expected, sample: count('sample', MAX_SAMPLE) ?? 20 };
}

const JOB_ID = /^job_[0-9a-z]{26}$/;
const IMPORTED_FILTERS = ['user_id', 'source_system', 'event_type', 'from', 'to'] as const;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

function instant(name: string, text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  if (!RFC3339.test(text) || Number.isNaN(Date.parse(text)))
    throw problem.invalidRequest(`${name} must be an RFC 3339 date-time`);
  return new Date(Date.parse(text));
}

const iso = (d: Date | string) => new Date(d).toISOString();

export const presentImportedEvent = (e: ImportedAuditEventRow) => ({
  id: e.id,
  user_id: e.user_id,
  source_system: e.source_system,
  event_type: e.event_type,
  occurred_at: iso(e.occurred_at),
  outcome: e.outcome,
  data: e.data,
  imported_at: iso(e.imported_at),
  job_id: e.job_id,
});

export function registerUserImportRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const deps = { db: ctx.db, keyring: ctx.keyring, metadataBytes: ctx.config.limits.metadataBytes };

  apiRoute(app, ctx, 'POST', '/user-imports', IMPORT, async ({ req, reply, caller, call }) => {
    const dryRun = dryRunOf(req);
    const r = {
      call,
      caller,
      body: req.body,
      dryRun,
      idempotencyKey: dryRun ? null : idempotencyKeyOf(req.headers),
    };
    if (dryRun) return dryRunImport(deps, r);
    return reply.code(202).send(await queueImport(deps, r));
  });

  apiRoute(app, ctx, 'GET', '/user-imports/reconciliation', IMPORT, async ({ req, call }) => {
    const q = reconciliationQuery(req.query);
    if (!ctx.keyring) throw problem.unavailable('the reconciliation needs a root key');
    return reconcile({ db: ctx.db, keyring: ctx.keyring, hasher: ctx.hasher }, call.realmId, q, call.now);
  });

  apiRoute<{ job: string }>(app, ctx, 'GET', '/user-imports/:job', IMPORT, async ({ req, call }) => {
    const jobId = req.params.job;
    const row = JOB_ID.test(jobId) ? await findUserImport(ctx.db, call.realmId, jobId) : null;
    if (!row) throw problem.notFound('no such import');
    return {
      job_id: row.job_id,
      finished: row.finished_at !== null,
      created_at: iso(row.created_at),
      finished_at: row.finished_at === null ? null : iso(row.finished_at),
      counts: row.report?.counts ?? null,
      records: row.report?.records ?? null,
    };
  });

  apiRoute(app, ctx, 'GET', '/imported-audit-events', READ_HISTORY, async ({ req, call }) => {
    const q = decodePageQuery(
      req.query,
      ctx.config.limits,
      `${call.realmId}/imported-audit-events`,
      IMPORTED_FILTERS,
    );
    const f = q.filters;
    const from = instant('from', f.from);
    const to = instant('to', f.to);
    const rows = await listImportedAuditEvents(
      ctx.db,
      call.realmId,
      {
        ...(f.user_id ? { userId: f.user_id } : {}),
        ...(f.source_system ? { sourceSystem: f.source_system } : {}),
        ...(f.event_type ? { eventType: f.event_type } : {}),
        ...(from ? { from } : {}),
        ...(to ? { to } : {}),
      },
      q.after,
      q.limit + 1,
    );
    return pageOf(rows, q, presentImportedEvent);
  });
}
