-- Passkeys (document 1, "Passkey policy (reference)", "Passkey trusted authenticators"): the
-- registered credentials, the single-use ceremony challenges and the realm's trusted
-- authenticator models.

-- One registered passkey. `credential_id` is the authenticator's id (base64url); `sign_count`
-- only moves forward; `aaguid` is kept because sign-in assertions do not carry it.
create table webauthn_credentials (
  realm_id text not null,
  id text not null,
  user_id text not null,
  credential_id text not null,
  public_key bytea not null,
  sign_count bigint not null default 0,
  transports text[] not null default '{}',
  aaguid text not null,
  backup_eligible boolean not null,
  backup_state boolean not null,
  user_verified boolean not null,
  attestation_format text not null,
  attestation_trusted boolean not null,
  attestation_source text check (attestation_source in ('realm', 'fido_metadata')),
  credential_protection text,
  name text not null,
  created_at timestamptz not null,
  last_used_at timestamptz,
  primary key (realm_id, id),
  foreign key (realm_id, user_id) references users (realm_id, id) on delete cascade
);
create unique index webauthn_credentials_credential on webauthn_credentials (realm_id, credential_id);
create index webauthn_credentials_user on webauthn_credentials (realm_id, user_id);

-- A ceremony in flight: the challenge the browser signs, what the response is checked against,
-- and who it belongs to (a sign-in transaction, an account, or both). Deleted when answered.
create table webauthn_ceremonies (
  realm_id text not null,
  id text not null,
  kind text not null check (kind in ('registration', 'authentication')),
  transaction_id text,
  user_id text,
  challenge text not null,
  expected jsonb not null,
  expires_at timestamptz not null,
  created_at timestamptz not null,
  primary key (realm_id, id)
);
create index webauthn_ceremonies_owner on webauthn_ceremonies (realm_id, kind, transaction_id, user_id);
create index webauthn_ceremonies_expiry on webauthn_ceremonies (expires_at);

-- Authenticator models a realm trusts: an AAGUID and the CA certificates its attestation chains to.
create table webauthn_trusted_authenticators (
  realm_id text not null,
  id text not null,
  aaguid text not null,
  description text not null,
  root_certificates text[] not null,
  created_at timestamptz not null,
  primary key (realm_id, id),
  unique (realm_id, aaguid)
);
