-- The token service: API resources (audiences) with their client grants and introspectors,
-- service principals behind client_credentials clients, user grants, refresh token families,
-- opaque access tokens, and the revocation records introspection reads (spec doc 1, API resource
-- definition and GrantSpec; doc 2, Revocation exposure).

-- Registered resources. The three built-in resources are not rows: their audiences follow the
-- operator's public origin, so they are derived in code and addressed as builtin:<name>.
create table resources (
  realm_id text not null references realms (id),
  id text not null,
  name text not null,
  audience text not null,
  verification_mode text not null check (verification_mode in ('offline', 'bounded_online', 'strict_online')),
  token_format text not null check (token_format in ('jwt', 'opaque')),
  access_token_ttl_seconds integer not null check (access_token_ttl_seconds between 30 and 3600),
  scopes jsonb not null default '[]',
  requires_organization boolean not null,
  impersonation_enabled boolean not null default false,
  impersonation_policy jsonb,
  signing_algorithm text not null default '',
  state text not null default 'active' check (state in ('active', 'disabled')),
  -- Bumped by every replacement; the ETag of the definition.
  version integer not null default 1,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, id),
  check (jsonb_typeof(scopes) = 'array')
);
create unique index resources_audience_key on resources (realm_id, audience);

-- What a client may request of a resource (GrantSpec). resource_id is a resource row id or
-- builtin:<name>.
create table client_resource_grants (
  realm_id text not null,
  client_row_id text not null,
  resource_id text not null,
  allowed_scopes text[] not null,
  subject_types text[] not null,
  exchange_policy jsonb,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, client_row_id, resource_id),
  foreign key (realm_id, client_row_id) references clients (realm_id, id)
);

-- Confidential clients allowed to introspect tokens of a resource's audience.
create table resource_introspectors (
  realm_id text not null,
  resource_id text not null,
  client_row_id text not null,
  created_at timestamptz not null,
  primary key (realm_id, resource_id, client_row_id),
  foreign key (realm_id, client_row_id) references clients (realm_id, id)
);
create index resource_introspectors_client on resource_introspectors (realm_id, client_row_id);

-- The subject of client_credentials tokens: one per service client.
create table service_principals (
  realm_id text not null,
  id text not null,
  client_row_id text not null,
  state text not null check (state in ('active', 'disabled')),
  authz_version integer not null default 1,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, id),
  foreign key (realm_id, client_row_id) references clients (realm_id, id)
);
create unique index service_principals_client on service_principals (realm_id, client_row_id);

-- Bumped when what the account may do changes; introspection reports it (doc 2, Revocation exposure).
alter table users add column authz_version integer not null default 1;
-- Shown in the account's session list.
alter table sessions add column user_agent text;
alter table sessions add column client_id text;

-- A user's authorization of a client: created when a sign-in completes, revoked by logout
-- everywhere and the other account-wide revocations. One live grant per user and client.
create table oauth_grants (
  realm_id text not null,
  id text not null,
  user_id text not null,
  client_id text not null,
  scopes text[] not null,
  resources text[] not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  revoked_at timestamptz,
  revoked_reason text,
  primary key (realm_id, id),
  foreign key (realm_id, user_id) references users (realm_id, id)
);
create unique index oauth_grants_live on oauth_grants (realm_id, user_id, client_id) where revoked_at is null;

-- Refresh tokens rotate inside a family; presenting a rotated one revokes the family.
-- session_id is null for offline families, which outlive the browser session.
create table refresh_families (
  realm_id text not null,
  id text not null,
  grant_id text not null,
  user_id text not null,
  client_id text not null,
  session_id text,
  offline boolean not null,
  scopes text[] not null,
  resources text[] not null,
  auth_time timestamptz not null,
  amr text[] not null,
  acr text not null,
  created_at timestamptz not null,
  idle_expires_at timestamptz not null,
  absolute_expires_at timestamptz not null,
  revoked_at timestamptz,
  revoked_reason text,
  primary key (realm_id, id),
  foreign key (realm_id, grant_id) references oauth_grants (realm_id, id)
);
create index refresh_families_user on refresh_families (realm_id, user_id) where revoked_at is null;
create index refresh_families_session on refresh_families (realm_id, session_id) where revoked_at is null;

create table refresh_tokens (
  realm_id text not null,
  token_digest text not null,
  family_id text not null,
  created_at timestamptz not null,
  rotated_at timestamptz,
  primary key (realm_id, token_digest),
  foreign key (realm_id, family_id) references refresh_families (realm_id, id)
);
create index refresh_tokens_family on refresh_tokens (realm_id, family_id);

-- Opaque access tokens: the claims live here, found by the digest of the token.
create table opaque_access_tokens (
  realm_id text not null,
  token_digest text not null,
  jti text not null,
  resource_id text not null,
  client_id text not null,
  user_id text,
  session_id text,
  claims jsonb not null,
  expires_at timestamptz not null,
  revoked_at timestamptz,
  created_at timestamptz not null,
  primary key (realm_id, token_digest)
);
create index opaque_access_tokens_user on opaque_access_tokens (realm_id, user_id) where revoked_at is null;
create index opaque_access_tokens_expiry on opaque_access_tokens (expires_at);

-- Revoked access token ids, kept until the token would have expired anyway.
create table token_revocations (
  realm_id text not null,
  jti text not null,
  reason text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null,
  primary key (realm_id, jti)
);
create index token_revocations_expiry on token_revocations (expires_at);

-- Account-wide revocation: every token of the user issued at or before revoked_before (whole
-- seconds) is inactive.
create table user_revocations (
  realm_id text not null,
  user_id text not null,
  revoked_before timestamptz not null,
  primary key (realm_id, user_id)
);

-- What a redeemed code issued, so a replay can revoke it (RFC 6749 section 4.1.2).
alter table authorization_codes add column issued jsonb;
