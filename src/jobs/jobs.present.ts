// The job record of the API (spec doc 2, Job record: id, state, result, progress, last_error),
// with the type, its organization, the requester and the times a poller needs.
import type { JobRow } from './jobs.repo.ts';

const iso = (d: Date | null): string | null => (d === null ? null : new Date(d).toISOString());

export function presentJob(j: JobRow) {
  return {
    id: j.id,
    type: j.type,
    state: j.state,
    organization_id: j.organization_id,
    requested_by: { type: j.requested_by_type, id: j.requested_by_id },
    progress: j.progress,
    result: j.result,
    // Until when a download token can be issued; null once purged or when there is no file.
    result_available_until: j.result_sealed === null ? null : iso(j.result_expires_at),
    last_error: j.last_error,
    attempts: j.attempts,
    created_at: iso(j.created_at),
    started_at: iso(j.started_at),
    finished_at: iso(j.finished_at),
    updated_at: iso(j.updated_at),
  };
}
