-- Client credentials for the token, introspection and revocation endpoints: generated client
-- secrets stored only as keyed verifiers (HMAC-SHA-256 under a root-key-derived key; the secrets
-- are high-entropy, so no password hash), each recording the root key version it was made with;
-- inline key sets for private_key_jwt, and the single-use record of client assertion ids.

create table client_secrets (
  realm_id text not null,
  id text not null,
  client_row_id text not null,
  verifier text not null,
  key_version integer not null check (key_version >= 1),
  created_at timestamptz not null,
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  primary key (realm_id, id),
  foreign key (realm_id, client_row_id) references clients (realm_id, id),
  check (expires_at is null or expires_at > created_at)
);
-- Authentication and the active-secret limit read a client's unrevoked secrets.
create index client_secrets_client on client_secrets (realm_id, client_row_id) where revoked_at is null;
-- Revoked rows are kept: the revocation log export and restore reconciliation read them by time.
create index client_secrets_revoked on client_secrets (revoked_at) where revoked_at is not null;

-- Public keys of a private_key_jwt client ({"keys": [...]}); null for every other method.
alter table clients add column jwks jsonb;
alter table clients add constraint clients_jwks_shape
  check (jwks is null or jsonb_typeof(jwks -> 'keys') = 'array');

-- A client assertion id is accepted once until its expiry (plus clock tolerance); stored as a digest.
create table client_assertion_jtis (
  realm_id text not null,
  client_row_id text not null,
  jti_digest text not null,
  expires_at timestamptz not null,
  primary key (realm_id, client_row_id, jti_digest)
);
create index client_assertion_jtis_expiry on client_assertion_jtis (expires_at);
