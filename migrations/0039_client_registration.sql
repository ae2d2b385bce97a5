-- Dynamic client registration (RFC 7591) and its management (RFC 7592) under the realm policy
-- client_registration (docs/oauth-registration.md). Initial access tokens and registration
-- access tokens are kept as SHA-256 digests only; the clear token is shown once.

-- The OpenID scopes a client may ask for through UserInfo's implicit grant. Null (every client made
-- by an administrator) means all of them; a registered client holds the scopes it registered,
-- within the policy's open_scopes.
alter table clients add column oidc_scopes text[];

create table initial_access_tokens (
  realm_id text not null references realms (id),
  id text not null,
  token_digest text not null,
  description text,
  max_uses integer not null check (max_uses between 1 and 1000),
  uses integer not null default 0 check (uses >= 0 and uses <= max_uses),
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz,
  created_at timestamptz not null,
  primary key (realm_id, id)
);
create unique index initial_access_tokens_digest on initial_access_tokens (token_digest);

-- One row per registered client. status: pending (held for an administrator, the client is
-- disabled), approved, rejected (stays disabled, token ended) or deleted (RFC 7592 DELETE).
create table client_registrations (
  realm_id text not null,
  client_row_id text not null,
  status text not null check (status in ('pending', 'approved', 'rejected', 'deleted')),
  initial_access_token_id text,
  registration_token_digest text,
  token_rotated_at timestamptz not null,
  metadata jsonb not null default '{}',
  created_at timestamptz not null,
  decided_at timestamptz,
  primary key (realm_id, client_row_id),
  foreign key (realm_id, client_row_id) references clients (realm_id, id),
  foreign key (realm_id, initial_access_token_id) references initial_access_tokens (realm_id, id)
);
create index client_registrations_pending on client_registrations (realm_id, created_at)
  where status = 'pending';

-- Revocation log (document 2, Revocation log record kinds): a use or revocation of an initial
-- access token, and every rotation (or ending) of a registration access token, written by trigger
-- in the transaction of the change. Identifiers, counts and digests only.
create function revocation_log_client_registration() returns trigger language plpgsql as $$
begin
  if tg_table_name = 'initial_access_tokens' then
    perform revocation_log_append(new.realm_id, 'initial_access_token',
      jsonb_build_object('token_id', new.id, 'uses', new.uses, 'max_uses', new.max_uses,
        'revoked_at', new.revoked_at, 'at', coalesce(new.revoked_at, new.last_used_at)));
  else
    perform revocation_log_append(new.realm_id, 'registration_token_rotated',
      jsonb_build_object('client_row_id', new.client_row_id, 'token_digest', new.registration_token_digest,
        'status', new.status, 'at', new.token_rotated_at));
  end if;
  return null;
end $$;
create trigger revocation_log_initial_access_tokens after update on initial_access_tokens
  for each row when (old.uses is distinct from new.uses or old.revoked_at is distinct from new.revoked_at)
  execute function revocation_log_client_registration();
create trigger revocation_log_registration_tokens after update on client_registrations
  for each row when (old.registration_token_digest is distinct from new.registration_token_digest)
  execute function revocation_log_client_registration();
