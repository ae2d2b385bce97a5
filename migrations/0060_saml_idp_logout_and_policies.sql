-- SAML identity provider: single logout, NameID policies, group and role attributes, encrypted assertions (docs/saml-idp.md; issue 35).

-- Where a SAML service provider takes LogoutRequests and LogoutResponses (HTTP-Redirect binding);
-- null: it takes part in no single logout.
alter table saml_clients add column slo_url text;

-- Which SAML service providers an SSO session signed in to, and the NameID each was given: a
-- logout of the session is sent on to them, and a LogoutRequest of one of them finds its session
-- by that NameID. The rows go with their session.
create table saml_session_participants (
  realm_id text not null,
  session_id text not null,
  client_id text not null,
  user_id text not null,
  name_id text not null,
  name_id_format text not null,
  created_at timestamptz not null,
  primary key (realm_id, session_id, client_id),
  foreign key (realm_id, session_id) references sessions (realm_id, id) on delete cascade
);
create index saml_session_participants_name_id on saml_session_participants (realm_id, client_id, name_id);

-- NameID formats an SP may ask for in its NameIDPolicy beside its registered one (null: only that
-- one), and the attribute names its assertions carry the account's groups and roles under (null:
-- not sent). The format an AuthnRequest asked for is kept on its request state (null: the
-- registered one).
alter table saml_clients add column allowed_name_id_formats text[];
alter table saml_clients add column groups_attribute text;
alter table saml_clients add column roles_attribute text;
alter table saml_idp_requests add column name_id_format text
  check (name_id_format in ('persistent', 'email', 'transient'));

-- PEM of the certificate an SP publishes for encryption: its assertions are then encrypted to it.
alter table saml_clients add column encryption_certificate text;
