// The audit.export job (spec doc 2, Jobs and exports; Limits: audit export job): queued by
// POST /audit-exports, run while its requester still holds realm.audit.export. The file holds the
// realm's audit records of the window (of one organization when the request names one), newest
// first, one record per line with its content hash, at most 2000 pages of 500 records. Imported
// history is not kept among the service's own records, so it never appears here.
import { contentHash, listAuditEvents, presentAuditEvent } from '../audit/index.ts';
import type { JobType } from '../jobs/index.ts';
import { permanentFailure } from '../jobs/index.ts';
import type { Db } from '../platform/db/db.ts';

export const AUDIT_EXPORT_PAGE = 500;
export const AUDIT_EXPORT_MAX_PAGES = 2000;

export interface AuditExportParams {
  organization_id: string | null;
  from: string;
  to: string;
}

export const auditExportJob: JobType<{ db: Db }> = {
  name: 'audit.export',
  permission: 'realm.audit.export',
  async run(deps, job) {
    const p = job.params as Partial<AuditExportParams>;
    if (typeof p.from !== 'string' || typeof p.to !== 'string')
      return permanentFailure('the job names no time window');
    const filters = {
      from: new Date(p.from),
      to: new Date(p.to),
      ...(typeof p.organization_id === 'string' ? { organizationId: p.organization_id } : {}),
    };
    const lines: string[] = [];
    let after: string | null = null;
    let pages = 0;
    let more = false;
    while (pages < AUDIT_EXPORT_MAX_PAGES) {
      const page = await listAuditEvents(deps.db, job.realmId, filters, after, AUDIT_EXPORT_PAGE);
      pages++;
      for (const e of page) {
        // A record not sealed yet gets the hash sealing will give it: the same function over the same fields.
        lines.push(
          `${JSON.stringify({ ...presentAuditEvent(e), content_hash: e.content_hash ?? contentHash(e) })}\n`,
        );
      }
      more = page.length === AUDIT_EXPORT_PAGE;
      if (!more) break;
      after = page[page.length - 1]?.id ?? null;
      if (pages % 20 === 0) await job.progress('audit_event', lines.length);
    }
    await job.progress('audit_event', lines.length);
    return {
      kind: 'file',
      format: 'ndjson',
      body: lines.join(''),
      // truncated: 1 when the window held more than the job's 2000 pages; narrow it for the rest.
      counts: { audit_events: lines.length, pages, truncated: more ? 1 : 0 },
    };
  },
};
