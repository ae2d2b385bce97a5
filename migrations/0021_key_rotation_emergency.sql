-- Emergency signing-key rotation, emergency controls and maintenance mode (spec doc 2, Signing key
-- states; Keys and emergency controls; Operator status object).

-- A revocation row names either one access token (kind token, jti = the token id) or a signing
-- key taken out of service by an emergency rotation (kind key, jti = the key's kid). Key ids are
-- 43-character JWK thumbprints and token ids carry a prefix, so the two never share a value.
alter table token_revocations add column kind text not null default 'token' check (kind in ('token', 'key'));

-- Emergency controls that have no state column of their own to change: today grant types, which a
-- realm can refuse at its token endpoint. One row per disabled target; enabling deletes it.
create table emergency_controls (
  realm_id text not null references realms (id),
  target_type text not null check (target_type in ('grant_type')),
  target_id text not null,
  action text not null check (action in ('disable')),
  reason text not null,
  created_by_type text not null,
  created_by_id text,
  created_at timestamptz not null,
  primary key (realm_id, target_type, target_id)
);

-- The deployment's maintenance mode: one row, shared by every server process (docs/operations.md).
create table maintenance_mode (
  singleton boolean primary key default true check (singleton),
  mode text not null check (mode in ('off', 'read_only', 'closed', 'debug')),
  message text,
  retry_after_seconds integer check (retry_after_seconds between 1 and 86400),
  debug_until timestamptz,
  debug_component text,
  updated_at timestamptz not null,
  updated_by text
);
