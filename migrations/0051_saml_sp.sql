-- Upstream SAML 2.0 identity providers (docs/federation.md, SAML): connections of kind saml, the
-- service-provider certificate each one publishes in its metadata (its private key is sealed in the
-- connection's secret slot, purpose provider-secret), the AuthnRequest a sign-in sent and what the
-- IdP answered to it, and the assertion ids already accepted (spec doc 2, Backup and restore 5 names
-- the SAML assertion id replay cache).

alter table identity_providers drop constraint identity_providers_kind_check;
alter table identity_providers add constraint identity_providers_kind_check
  check (kind in ('oidc', 'oauth2', 'saml'));
-- The self-signed certificate of the connection's service-provider key pair (PEM): it signs the
-- AuthnRequests and decrypts encrypted assertions. Public; the private key never leaves sealed.
alter table identity_providers add column sp_certificate text;

-- A SAML request state is a federation request with the ID of the AuthnRequest it sent. The
-- assertion consumer service checks the IdP's answer and keeps the outcome here; the callback that
-- follows in the same browser claims the row once, as for OpenID Connect.
alter table federation_requests add column saml_request_id text;
alter table federation_requests add column saml_outcome jsonb;

-- Assertion ids accepted from each SAML connection, kept until the assertion could no longer be
-- accepted anyway, so a replayed assertion is refused by every process sharing the database.
create table saml_assertion_ids (
  realm_id text not null,
  provider_id text not null,
  assertion_id text not null,
  expires_at timestamptz not null,
  primary key (realm_id, provider_id, assertion_id)
);
create index saml_assertion_ids_expiry on saml_assertion_ids (expires_at);
