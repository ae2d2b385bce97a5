-- Device authorization grant (RFC 8628, docs/oauth-device.md). A row per device authorization
-- request: the device code and the user code are kept only as digests. The person who enters the
-- user code signs in through a sign-in transaction with intent device; its completion approves the
-- row (user, session, granted scopes), a refusal marks it denied, and one token request spends it.
create table device_authorizations (
  realm_id text not null references realms (id),
  id text not null,
  device_code_digest text not null,
  user_code_digest text not null,
  client_id text not null,
  scopes text[] not null,
  resources text[] not null,
  status text not null check (status in ('pending', 'approved', 'denied', 'consumed')),
  -- The sign-in transaction that last took the user code; only it may approve or deny.
  transaction_id text,
  user_id text,
  session_id text,
  org_id text,
  granted_scopes text[],
  interval_seconds integer not null,
  last_polled_at timestamptz,
  expires_at timestamptz not null,
  decided_at timestamptz,
  consumed_at timestamptz,
  created_at timestamptz not null,
  primary key (realm_id, id),
  foreign key (realm_id, user_id) references users (realm_id, id)
);
create unique index device_authorizations_device_code on device_authorizations (realm_id, device_code_digest);
create unique index device_authorizations_user_code on device_authorizations (realm_id, user_code_digest);
create index device_authorizations_expiry on device_authorizations (expires_at);
create index device_authorizations_user on device_authorizations (realm_id, user_id) where user_id is not null;

-- The command line client of every realm may use the device grant (identity-cli login --device).
update clients
   set grant_types = array_append(grant_types, 'urn:ietf:params:oauth:grant-type:device_code')
 where builtin and client_id = 'identity-cli'
   and not ('urn:ietf:params:oauth:grant-type:device_code' = any (grant_types));
