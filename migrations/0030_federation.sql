-- Federation: upstream identity providers (connections), the identities linked to accounts, tokens
-- kept from upstream, sign-ins in flight at an upstream provider, and account merges (spec doc 1,
-- sign-in step 2 and 8, federation/start, link_account; doc 2, realm export identity_provider
-- lines, Data lifecycle 4 and 5, Keys and emergency controls). docs/federation.md explains them.

-- A connection to an upstream provider, realm-wide (organization_id null) or of one organization.
-- The client secret is sealed under the root key (purpose provider-secret) or named by a key
-- reference; neither is ever returned or exported.
create table identity_providers (
  realm_id text not null references realms (id),
  id text not null,
  organization_id text,
  alias text not null,
  display_name text not null,
  kind text not null check (kind in ('oidc', 'oauth2')),
  adapter text not null check (adapter in ('generic', 'google', 'microsoft', 'github', 'gitlab', 'apple')),
  state text not null check (state in ('active', 'disabled')),
  issuer text not null,
  config jsonb not null default '{}',
  linking_policy text not null check (linking_policy in ('prove_existing', 'none')),
  jit_provisioning boolean not null,
  jit_default_role_id text,
  trust_upstream_mfa boolean not null,
  claim_mapping jsonb not null default '{}',
  client_secret_sealed text,
  client_secret_ref text,
  owner_user_id text,
  version integer not null default 1,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, id),
  foreign key (realm_id, organization_id) references organizations (realm_id, id),
  check (client_secret_sealed is null or client_secret_ref is null)
);
-- The alias is the connection's name in the callback path and in federation/start.
create unique index identity_providers_alias on identity_providers (realm_id, lower(alias));
create index identity_providers_org on identity_providers (realm_id, organization_id)
  where organization_id is not null;

-- An upstream identity linked to an account. The id stays with the link for its whole life: a
-- federation transfer moves it to another connection keeping id and account, and provenance says
-- how it reached its present place.
create table linked_identities (
  realm_id text not null,
  id text not null,
  user_id text not null,
  provider_id text not null,
  upstream_issuer text not null,
  upstream_subject text not null,
  provenance text not null check (provenance in ('jit', 'link', 'merge', 'federation_transfer', 'import')),
  -- The upstream address last seen, shown to the account's owner beside the provider name.
  upstream_email text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  last_used_at timestamptz,
  primary key (realm_id, id),
  foreign key (realm_id, user_id) references users (realm_id, id),
  foreign key (realm_id, provider_id) references identity_providers (realm_id, id)
);
create unique index linked_identities_subject
  on linked_identities (realm_id, provider_id, upstream_issuer, upstream_subject);
create index linked_identities_user on linked_identities (realm_id, user_id);

-- Tokens the upstream issued, kept (sealed) only for connections whose config asks for it
-- (store_tokens). A transfer drops the ones of its source connection; erasure and unlinking drop
-- them with the link.
create table upstream_tokens (
  realm_id text not null,
  linked_identity_id text not null,
  provider_id text not null,
  user_id text not null,
  access_token_sealed text,
  refresh_token_sealed text,
  scope text,
  expires_at timestamptz,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, linked_identity_id),
  foreign key (realm_id, linked_identity_id) references linked_identities (realm_id, id) on delete cascade
);
create index upstream_tokens_provider on upstream_tokens (realm_id, provider_id);

-- A sign-in sent to an upstream provider and not back yet. The state travels through the browser
-- and is stored as a digest; the callback claims the row once (a replayed state finds it used).
create table federation_requests (
  realm_id text not null,
  id text not null,
  transaction_id text not null,
  provider_id text not null,
  state_digest text not null,
  -- Browser mode: digest of the pa_fed cookie set by federation/start, presented at the callback.
  browser_digest text,
  nonce text not null,
  code_verifier text not null,
  redirect_uri text not null,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  consumed_at timestamptz,
  primary key (realm_id, id),
  foreign key (realm_id, transaction_id) references signin_transactions (realm_id, id) on delete cascade
);
create unique index federation_requests_state on federation_requests (realm_id, state_digest);

-- What the upstream said about a sign-in transaction: the identity it proved (kept while a link
-- waits for the existing account's proof), or that it could not be reached (the notice).
create table signin_federation (
  realm_id text not null,
  transaction_id text not null,
  provider_id text not null,
  status text not null check (status in ('upstream_unavailable', 'link_pending', 'authenticated')),
  upstream_issuer text,
  upstream_subject text,
  claims jsonb not null default '{}',
  upstream_mfa boolean not null default false,
  -- An account already holds the upstream's email address (the account_conflict notice).
  conflict boolean not null default false,
  linked_identity_id text,
  updated_at timestamptz not null,
  primary key (realm_id, transaction_id),
  foreign key (realm_id, transaction_id) references signin_transactions (realm_id, id) on delete cascade
);

-- Account merges, kept without cleanup (doc 2, Data lifecycle 4): which account absorbed which,
-- the links that moved, who did it and why.
create table account_merges (
  realm_id text not null,
  id text not null,
  target_user_id text not null,
  source_user_id text not null,
  moved_identity_ids text[] not null,
  actor_type text not null,
  actor_id text,
  reason text not null,
  created_at timestamptz not null,
  primary key (realm_id, id)
);
create index account_merges_target on account_merges (realm_id, target_user_id);
