-- Plugins (docs/plugins.md): packages that declare hooks, webhook subscriptions and lifecycle
-- workflows, uploaded as versions, approved under the realm policy's extensions.plugin_review and
-- installed as one unit (document 2, Limits, "Plugins"). Plugins and their versions are kept
-- without clean-up and never exported (document 2, Data lifecycle 4; Realm data export).
create table plugins (
  realm_id text not null references realms (id),
  id text not null,
  name text not null,
  -- the version whose objects exist now; null while nothing is installed
  installed_version_id text,
  installed_by_type text,
  installed_by_id text,
  installed_at timestamptz,
  revision integer not null default 1,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, id)
);
create unique index plugins_name on plugins (realm_id, name);

create table plugin_versions (
  realm_id text not null,
  id text not null,
  plugin_id text not null,
  version text not null,
  -- the manifest and payload as uploaded (wire form), read again at installation
  manifest jsonb not null,
  payload jsonb not null,
  state text not null check (state in ('uploaded', 'approved')),
  uploaded_by_type text not null,
  uploaded_by_id text,
  approved_by_type text,
  approved_by_id text,
  approved_at timestamptz,
  created_at timestamptz not null,
  primary key (realm_id, id),
  foreign key (realm_id, plugin_id) references plugins (realm_id, id)
);
create unique index plugin_versions_version on plugin_versions (realm_id, plugin_id, version);

-- The objects a plugin manages carry its id (webhook_subscriptions has the column since 0016).
alter table hooks add column plugin_id text;
alter table workflows add column plugin_id text;
create index hooks_plugin on hooks (realm_id, plugin_id) where plugin_id is not null;
create index workflows_plugin on workflows (realm_id, plugin_id) where plugin_id is not null;
create index webhook_subscriptions_plugin on webhook_subscriptions (realm_id, plugin_id)
  where plugin_id is not null;
