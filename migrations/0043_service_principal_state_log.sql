-- A service principal disabled or enabled is a `revocation` record of the revocation log (target
-- service_principal), written by trigger in the transaction of the change whatever path makes it
-- (POST /service-principals/{id}/disable, its client's disablement, its organization's deletion),
-- so restore-reconcile disables again a principal disabled after the backup; only the last logged
-- state of a principal counts there, as for clients. The record carries identifiers and the state.
create function revocation_log_service_principal() returns trigger language plpgsql as $$
begin
  perform revocation_log_append(new.realm_id, 'revocation',
    jsonb_build_object('target', 'service_principal', 'service_principal_id', new.id,
      'state', new.state, 'at', new.updated_at));
  return null;
end $$;
create trigger revocation_log_service_principals after update on service_principals
  for each row when (old.state is distinct from new.state)
  execute function revocation_log_service_principal();
