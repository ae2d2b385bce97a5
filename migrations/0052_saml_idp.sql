-- ProudAuth as a SAML 2.0 identity provider (docs/saml-idp.md, issue 35).

-- A SAML service provider is a client of type saml: it signs users in through the same sign-in
-- transaction as every client, so it shares the clients table; its SAML settings live beside it.
alter table clients drop constraint clients_type_check;
alter table clients add constraint clients_type_check
  check (type in ('web', 'spa', 'native', 'device', 'service', 'saml'));

create table saml_clients (
  realm_id text not null,
  client_row_id text not null,
  entity_id text not null,
  acs_urls text[] not null,
  name_id_format text not null check (name_id_format in ('persistent', 'email', 'transient')),
  -- PEM of the certificate that signs the SP's AuthnRequests; null: unsigned requests are taken.
  signing_certificate text,
  attributes text[] not null default '{}',
  primary key (realm_id, client_row_id),
  foreign key (realm_id, client_row_id) references clients (realm_id, id) on delete cascade
);
create unique index saml_clients_entity_id on saml_clients (realm_id, entity_id);

-- The realm's SAML signing keys: an RSA key with a self-signed certificate, in the same states as
-- the token signing keys (pending, active, retiring, retired, compromised).
create table saml_signing_keys (
  realm_id text not null references realms (id),
  kid text not null,
  state text not null check (state in ('pending', 'active', 'retiring', 'retired', 'compromised')),
  certificate text not null,
  private_key_sealed text not null,
  root_key_version integer not null,
  created_at timestamptz not null,
  activated_at timestamptz,
  retiring_at timestamptz,
  publish_until timestamptz,
  retired_at timestamptz,
  compromised_at timestamptz,
  primary key (realm_id, kid)
);
create unique index saml_signing_keys_one_active on saml_signing_keys (realm_id) where state = 'active';
create unique index saml_signing_keys_one_pending on saml_signing_keys (realm_id) where state = 'pending';

-- SAML request states: one per accepted AuthnRequest, used once when the sign-in comes back. The
-- unique request id per service provider refuses a replayed AuthnRequest.
create table saml_idp_requests (
  realm_id text not null references realms (id),
  id text not null,
  client_id text not null,
  request_id text,
  acs_url text not null,
  relay_state text,
  code_challenge text not null,
  -- When the sign-in transaction was started for it: a request state starts one transaction only.
  started_at timestamptz,
  expires_at timestamptz not null,
  consumed_at timestamptz,
  created_at timestamptz not null,
  primary key (realm_id, id)
);
create unique index saml_idp_requests_request_id on saml_idp_requests (realm_id, client_id, request_id)
  where request_id is not null;
create index saml_idp_requests_expiry on saml_idp_requests (expires_at);

-- Persistent pairwise NameIDs: one random value per service provider and account, stored so it
-- stays the same across root-key rotations (document 2 "Key custody" 2).
create table saml_subjects (
  realm_id text not null,
  client_id text not null,
  user_id text not null,
  name_id text not null,
  created_at timestamptz not null,
  primary key (realm_id, client_id, user_id)
);
create unique index saml_subjects_name_id on saml_subjects (realm_id, client_id, name_id);
