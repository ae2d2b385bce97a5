-- Revoking an API key (migration 0031) is an automation credential revocation in the revocation
-- log (spec doc 2, Revocation log record kinds; Backup and restore 2), as a SCIM connector's is
-- (0037): written by trigger in the transaction of the revocation, whatever path revokes the key
-- (DELETE /api-keys/{id}, a principal's deletion, its organization's deletion), and re-applied by
-- restore-reconcile. The record names the key and its principal; never the digest of its secret.
create function revocation_log_api_key() returns trigger language plpgsql as $$
begin
  perform revocation_log_append(new.realm_id, 'automation_credential_revoked',
    jsonb_build_object('credential', 'api_key', 'credential_id', new.id,
      'service_principal_id', new.service_principal_id, 'at', new.revoked_at));
  return null;
end $$;
create trigger revocation_log_api_keys after update on api_keys
  for each row when (old.revoked_at is null and new.revoked_at is not null)
  execute function revocation_log_api_key();

-- Keys revoked before this migration get their record now, so a log shipped after upgrading can
-- still re-apply them over a backup taken before they were revoked.
select revocation_log_append(realm_id, 'automation_credential_revoked',
  jsonb_build_object('credential', 'api_key', 'credential_id', id,
    'service_principal_id', service_principal_id, 'at', revoked_at))
  from api_keys where revoked_at is not null order by revoked_at, id;
