-- SCIM 2.0 provisioning (RFC 7643/7644; spec doc 2, Limits: SCIM; docs/scim.md).
-- A connector is one provisioning client of a realm (Entra ID, Okta, ...). Its bearer credential
-- is kept as a SHA-256 digest of the secret half, like an API key; it is shown once.
create table scim_connectors (
  realm_id text not null,
  id text not null,
  name text not null,
  secret_digest text not null,
  created_at timestamptz not null,
  revoked_at timestamptz,
  primary key (realm_id, id)
);

-- The SCIM side of a provisioned account: the userName the directory knows it by, its
-- externalId, the attributes the account model has no column for (name parts, emails, the
-- enterprise extension) and the version its ETag carries. Erased with the account.
create table scim_users (
  realm_id text not null,
  user_id text not null,
  connector_id text not null,
  user_name text not null,
  user_name_key text not null,
  external_id text,
  attributes jsonb not null default '{}',
  version integer not null default 1,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, user_id),
  foreign key (realm_id, user_id) references users (realm_id, id)
);
create unique index scim_users_user_name on scim_users (realm_id, user_name_key);
create index scim_users_external_id on scim_users (realm_id, external_id);

-- Revoking a connector is an automation credential revocation in the revocation log (spec doc 2,
-- Revocation exposure), so restore-reconcile keeps it revoked over an older backup.
create function revocation_log_scim_connector() returns trigger language plpgsql as $$
begin
  perform revocation_log_append(new.realm_id, 'automation_credential_revoked',
    jsonb_build_object('credential', 'scim_connector', 'credential_id', new.id, 'at', new.revoked_at));
  return null;
end $$;
create trigger revocation_log_scim_connectors after update on scim_connectors
  for each row when (old.revoked_at is null and new.revoked_at is not null)
  execute function revocation_log_scim_connector();
