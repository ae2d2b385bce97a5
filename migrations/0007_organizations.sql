-- Organizations, memberships, groups, projects, the role model around them and relationship-based
-- authorization (spec doc 1 "Authorization decision"; doc 2 "Organization membership",
-- "Organization deletion", export record shapes and the Relationships limits).

create table organizations (
  realm_id text not null references realms (id),
  id text not null,
  slug text not null,
  display_name text not null,
  state text not null check (state in ('active', 'suspended', 'archived', 'deleting', 'deleted')),
  locale text,
  time_zone text,
  metadata jsonb not null default '{}',
  contact jsonb,
  external_id text,
  -- {mfa_required, require_sso, audit_retention_days}
  policy jsonb not null default '{}',
  template_name text,
  template_version text,
  version integer not null default 1,
  deletion_job_id text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, id)
);
create unique index organizations_slug on organizations (realm_id, lower(slug)) where state <> 'deleted';
create unique index organizations_external_id on organizations (realm_id, external_id)
  where external_id is not null and state <> 'deleted';

-- A domain belongs to at most one organization of a realm.
create table organization_domains (
  realm_id text not null,
  domain text not null,
  organization_id text not null,
  verified boolean not null default false,
  created_at timestamptz not null,
  primary key (realm_id, domain),
  foreign key (realm_id, organization_id) references organizations (realm_id, id)
);
create index organization_domains_org on organization_domains (realm_id, organization_id);

-- One row per membership life: removed and expired rows are history, a later membership of the
-- same user is a new row. authorization_revision counts changes that affect what it grants.
create table memberships (
  realm_id text not null,
  id text not null,
  organization_id text not null,
  user_id text not null,
  state text not null check (state in ('invited', 'pending_approval', 'active', 'suspended', 'expired', 'removed')),
  source text not null,
  external_id text,
  metadata jsonb not null default '{}',
  joined_at timestamptz,
  expires_at timestamptz,
  authorization_revision integer not null default 1,
  ended_reason text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, id),
  foreign key (realm_id, organization_id) references organizations (realm_id, id),
  foreign key (realm_id, user_id) references users (realm_id, id)
);
create unique index memberships_live on memberships (realm_id, organization_id, user_id)
  where state not in ('removed', 'expired');
create index memberships_user on memberships (realm_id, user_id) where state not in ('removed', 'expired');
create index memberships_org on memberships (realm_id, organization_id, id);
create index memberships_expiry on memberships (expires_at) where state = 'active' and expires_at is not null;

-- Invitations (kind invitation, 72 h, resends counted) and join requests (kind join_request,
-- 14 days) behind memberships in the invited and pending_approval states.
create table membership_requests (
  realm_id text not null,
  id text not null,
  kind text not null check (kind in ('invitation', 'join_request')),
  membership_id text not null,
  organization_id text not null,
  user_id text not null,
  state text not null check (state in ('pending', 'accepted', 'approved', 'declined', 'denied',
    'withdrawn', 'revoked', 'reassigned', 'expired')),
  role_ids text[] not null default '{}',
  resend_count integer not null default 0,
  last_sent_at timestamptz,
  requested_by text,
  decided_by text,
  message text,
  expires_at timestamptz not null,
  decided_at timestamptz,
  created_at timestamptz not null,
  primary key (realm_id, id),
  foreign key (realm_id, membership_id) references memberships (realm_id, id)
);
create index membership_requests_org on membership_requests (realm_id, organization_id, kind, id);
create index membership_requests_user on membership_requests (realm_id, user_id, kind) where state = 'pending';
create index membership_requests_expiry on membership_requests (expires_at) where state = 'pending';

create table projects (
  realm_id text not null,
  id text not null,
  name text not null,
  description text,
  environment text not null check (environment in ('development', 'staging', 'production')),
  state text not null check (state in ('active', 'suspended', 'archived')),
  owner_user_id text,
  owner_organization_id text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, id)
);
create unique index projects_name on projects (realm_id, coalesce(owner_organization_id, ''), lower(name));
create index projects_org on projects (realm_id, owner_organization_id);

-- Groups nest up to 8 levels (depth 1 is a top-level group); a realm-wide group has no organization.
create table groups (
  realm_id text not null,
  id text not null,
  organization_id text,
  parent_id text,
  depth integer not null check (depth between 1 and 8),
  name text not null,
  description text,
  metadata jsonb not null default '{}',
  external_id text,
  source text not null default 'admin',
  dynamic_rule jsonb,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, id),
  foreign key (realm_id, parent_id) references groups (realm_id, id)
);
create unique index groups_name on groups (realm_id, coalesce(organization_id, ''), coalesce(parent_id, ''), lower(name));
create index groups_parent on groups (realm_id, parent_id);

create table group_members (
  realm_id text not null,
  group_id text not null,
  subject_type text not null check (subject_type in ('user', 'service_principal')),
  subject_id text not null,
  created_at timestamptz not null,
  primary key (realm_id, group_id, subject_type, subject_id),
  foreign key (realm_id, group_id) references groups (realm_id, id)
);
create index group_members_subject on group_members (realm_id, subject_type, subject_id);

-- Application permissions registered by name; built-in names (realm., org., support., platform.)
-- live in code.
create table permissions (
  realm_id text not null references realms (id),
  name text not null,
  description text,
  sensitivity text not null default 'normal' check (sensitivity in ('low', 'normal', 'high', 'privileged')),
  created_at timestamptz not null,
  primary key (realm_id, name)
);

-- Roles: scope says where a role may be assigned. realm: realm scope only; organization: a
-- realm-wide definition assigned inside organizations; a role with organization_id or project_id
-- belongs to that one organization or project.
alter table roles add column scope text not null default 'realm'
  check (scope in ('realm', 'organization', 'project'));
alter table roles add column organization_id text;
alter table roles add column project_id text;
alter table roles add column composite_role_ids text[] not null default '{}';
alter table roles add column incompatible_role_ids text[] not null default '{}';
alter table roles add column version integer not null default 1;
alter table roles add column updated_at timestamptz not null default now();
drop index roles_name_key;
create unique index roles_name_key
  on roles (realm_id, coalesce(organization_id, ''), coalesce(project_id, ''), lower(name));

-- Assignments: conditions {require_mfa, max_auth_age_seconds}, a validity window, and the
-- membership an assignment is held through (removed with it).
alter table role_assignments add column conditions jsonb;
alter table role_assignments add column valid_from timestamptz;
alter table role_assignments add column expires_at timestamptz;
alter table role_assignments add column membership_id text;
create index role_assignments_scope on role_assignments (realm_id, scope_type, scope_id);
create index role_assignments_role on role_assignments (realm_id, role_id);

alter table service_principals add column name text;
alter table service_principals add column description text;
alter table service_principals add column owner_user_id text;
alter table service_principals add column owner_organization_id text;
-- null: any organization; an empty list: none.
alter table service_principals add column allowed_organization_ids text[];
alter table service_principals add column is_agent boolean not null default false;
alter table service_principals drop constraint service_principals_state_check;
alter table service_principals add constraint service_principals_state_check
  check (state in ('active', 'disabled', 'deleted'));
-- Service principals not behind a client (created through the API) have no client row.
alter table service_principals alter column client_row_id drop not null;

-- Tokens and grants in the context of one organization.
alter table oauth_grants add column org_id text;
drop index oauth_grants_live;
create unique index oauth_grants_live on oauth_grants (realm_id, user_id, client_id, coalesce(org_id, ''))
  where revoked_at is null;
create index oauth_grants_org on oauth_grants (realm_id, org_id, user_id) where revoked_at is null and org_id is not null;
alter table refresh_families add column org_id text;
alter table opaque_access_tokens add column org_id text;
alter table authorization_codes add column org_id text;
alter table signin_transactions add column organization_id text;

-- Relationship-based authorization: resource types define relations and permissions; tuples say
-- that a subject (or a subject set, subject_relation) has a relation to an object.
create table authz_types (
  realm_id text not null references realms (id),
  name text not null,
  -- {relation: [allowed subject types, "type" or "type#relation"]}
  relations jsonb not null,
  -- {permission: expression}
  permissions jsonb not null,
  version integer not null default 1,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, name)
);

create table authz_tuples (
  realm_id text not null,
  object_type text not null,
  object_id text not null,
  relation text not null,
  subject_type text not null,
  subject_id text not null,
  subject_relation text not null default '',
  org_id text,
  created_at timestamptz not null,
  primary key (realm_id, object_type, object_id, relation, subject_type, subject_id, subject_relation)
);
create index authz_tuples_subject on authz_tuples (realm_id, subject_type, subject_id, relation, object_type);

-- Bumped by every change to roles, assignments, memberships, groups, types and tuples: the
-- decision API's policy_version.
alter table realms add column authz_revision bigint not null default 1;

-- The built-in organization roles for realms that exist already (new realms get them at creation).
insert into roles (realm_id, id, name, description, builtin, scope, created_at, updated_at)
select r.id, 'rol_' || substr(md5(r.id || ':' || b.name), 1, 26), b.name, b.description, true, 'organization', now(), now()
  from realms r
  cross join (values
    ('owner', 'Owns an organization: every organization permission'),
    ('admin', 'Administers an organization, short of deleting it or transferring ownership'),
    ('member', 'Belongs to an organization: reads it, its members, groups and projects')) as b(name, description)
 where not exists (select 1 from roles x where x.realm_id = r.id and x.organization_id is null
                     and x.project_id is null and lower(x.name) = b.name);
