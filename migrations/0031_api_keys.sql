-- API keys (spec doc 2, read APIs and Restore; docs/api-keys.md): long-lived automation
-- credentials of one service principal. Only a SHA-256 digest of the secret half is kept; the key
-- is shown once, at creation. Never part of a realm export.
create table api_keys (
  realm_id text not null,
  id text not null,
  service_principal_id text not null,
  name text not null,
  secret_digest text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  revoked_at timestamptz,
  primary key (realm_id, id),
  foreign key (realm_id, service_principal_id) references service_principals (realm_id, id)
);
create index api_keys_principal on api_keys (realm_id, service_principal_id, id);
