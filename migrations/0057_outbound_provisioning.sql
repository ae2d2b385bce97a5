-- Outbound provisioning (docs/provisioning.md): a target is an outside SCIM 2.0 service provider
-- the realm, or one organization of it, pushes its users and groups to (task provisioning.push)
-- and pulls them from (job directory.sync). Its bearer credential is sealed under the root key
-- (purpose provisioning-credential) and never leaves the service again.
create table provisioning_targets (
  realm_id text not null references realms (id),
  id text not null,
  organization_id text,
  name text not null,
  base_url text not null,
  credential_sealed text not null,
  allow_private_network boolean not null default false,
  push_enabled boolean not null default true,
  state text not null check (state in ('active', 'paused')),
  created_at timestamptz not null,
  updated_at timestamptz not null,
  -- The push sweep, a work queue of targets (platform/work-queue): where the current pass is
  -- (`user:<id>`, `group:<id>`, null at a pass's start), when it is due next, its lease and
  -- claims, and the consecutive failures its backoff counts.
  push_cursor text,
  push_due_at timestamptz not null,
  locked_by text,
  locked_until timestamptz,
  attempts integer not null default 0,
  push_failures integer not null default 0,
  last_push_error text,
  last_pushed_at timestamptz,
  primary key (realm_id, id),
  foreign key (realm_id, organization_id) references organizations (realm_id, id)
);
create index provisioning_targets_push_due on provisioning_targets (push_due_at)
  where state = 'active' and push_enabled;

-- Which remote resource a local one is at the target: direction push (we created it there) or
-- pull (directory.sync created or adopted it here). local_type and local_id name a user or a
-- group; pushed_digest is the SHA-256 of the representation last accepted by the target, so an
-- unchanged resource is not sent again and a retried push is idempotent.
create table provisioning_links (
  realm_id text not null,
  target_id text not null,
  direction text not null check (direction in ('push', 'pull')),
  local_type text not null check (local_type in ('user', 'group')),
  local_id text not null,
  remote_id text not null,
  pushed_digest text,
  updated_at timestamptz not null,
  primary key (realm_id, target_id, direction, local_type, local_id),
  foreign key (realm_id, target_id) references provisioning_targets (realm_id, id) on delete cascade
);
create unique index provisioning_links_remote
  on provisioning_links (realm_id, target_id, direction, local_type, remote_id);
create index provisioning_links_local on provisioning_links (realm_id, local_type, local_id);
