-- Each SSO session and each refresh family keeps the idle length it was created with (from the
-- realm policy's sessions and tokens members, docs/signin.md "Session lifetimes"), so activity
-- extends its idle expiry without reading the policy. Rows from before this migration get the
-- lengths they had then: 30 minutes; 7 days for a remember-me session and an offline family; a
-- session-bound family follows its session.
alter table sessions add column idle_seconds integer not null default 1800;
update sessions set idle_seconds = 604800 where remember_me and not transient;
alter table sessions alter column idle_seconds drop default;
alter table sessions add constraint sessions_idle_seconds check (idle_seconds > 0);

alter table refresh_families add column idle_seconds integer not null default 1800;
update refresh_families set idle_seconds = 604800 where offline;
update refresh_families f set idle_seconds = s.idle_seconds
  from sessions s where s.realm_id = f.realm_id and s.id = f.session_id and not f.offline;
alter table refresh_families alter column idle_seconds drop default;
alter table refresh_families add constraint refresh_families_idle_seconds check (idle_seconds > 0);
