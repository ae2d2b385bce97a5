-- Support access (impersonation): short-lived grants that let a support user act as a customer
-- through a support tool, the one-time handoff code that turns a grant into a token, and the
-- customer's opt-out (docs/support-access.md; spec doc 1, Limits "Support grant"; doc 2,
-- Revocation exposure and Events).

create table support_grants (
  realm_id text not null references realms (id),
  id text not null,
  -- Expiry is not a stored state: a grant past expires_at reads as expired (no event, doc 2).
  state text not null check (state in ('active', 'revoked')),
  actor_user_id text not null,
  target_user_id text not null,
  -- The support tool's client_id, the one client that may redeem the handoff code.
  client_id text not null,
  resource_id text not null,
  organization_id text,
  scopes text[] not null,
  write boolean not null,
  reason text not null,
  -- SHA-256 of the handoff code; the code itself is shown once and never stored.
  handoff_digest text not null,
  handoff_expires_at timestamptz not null,
  handoff_used_at timestamptz,
  expires_at timestamptz not null,
  created_at timestamptz not null,
  revoked_at timestamptz,
  revoked_reason text,
  revoked_by_type text,
  revoked_by_id text,
  primary key (realm_id, id),
  foreign key (realm_id, actor_user_id) references users (realm_id, id),
  foreign key (realm_id, target_user_id) references users (realm_id, id),
  check (expires_at > created_at),
  check (handoff_expires_at <= expires_at)
);
create unique index support_grants_handoff on support_grants (realm_id, handoff_digest);
create index support_grants_target on support_grants (realm_id, target_user_id, id);
create index support_grants_actor on support_grants (realm_id, actor_user_id, id);
-- Account-wide revocations and opt-outs end the target's live grants.
create index support_grants_target_active on support_grants (realm_id, target_user_id) where state = 'active';

-- A customer's own choice about support access; no row means the realm's default (allowed).
create table support_access_preferences (
  realm_id text not null,
  user_id text not null,
  allowed boolean not null,
  updated_at timestamptz not null,
  primary key (realm_id, user_id),
  foreign key (realm_id, user_id) references users (realm_id, id)
);
