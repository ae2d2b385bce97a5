-- Operator status and exports (spec doc 2, Restore marker; Jobs and exports).

-- The restore marker: at most one row. While it exists, GET /health/ready answers 503 with reason
-- restore_pending (identity-cli restore-begin sets it; restore-reconcile clears it).
create table restore_marker (
  singleton boolean primary key default true check (singleton),
  marked_at timestamptz not null,
  marked_by text
);

-- The audit export reads one organization's records newest first.
create index audit_events_realm_org_time on audit_events (realm_id, org_id, id desc) where org_id is not null;
