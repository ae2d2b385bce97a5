-- Role definitions (the roles rows: names, permissions, composites) are read on every decision and
-- administration request, and change rarely, so each server process keeps a realm's definitions in
-- memory (src/roles/role-definitions.ts). roles_revision says when that copy is stale: it moves in
-- the same transaction as every insert, update, delete or truncate of a realm's roles, by trigger,
-- so no write path (the API, configuration as code, imports, realm creation, a hand-written SQL
-- statement) can forget it. Assignments, memberships and groups are not covered: they are always
-- read live. A new revision is at least the current time in milliseconds, so a database restored
-- from a backup never reaches again a revision a server copied before the restore.
alter table realms add column roles_revision bigint not null default 1;

create function roles_revision_next(current bigint) returns bigint language sql as $$
  select greatest(current + 1, (extract(epoch from clock_timestamp()) * 1000)::bigint)
$$;

create function roles_revision_bump() returns trigger language plpgsql as $$
begin
  -- Each branch reads only the transition tables its trigger declares.
  if tg_op = 'INSERT' then
    update realms set roles_revision = roles_revision_next(roles_revision)
     where id in (select realm_id from roles_new);
  elsif tg_op = 'DELETE' then
    update realms set roles_revision = roles_revision_next(roles_revision)
     where id in (select realm_id from roles_old);
  elsif tg_op = 'UPDATE' then
    update realms set roles_revision = roles_revision_next(roles_revision)
     where id in (select realm_id from roles_new union select realm_id from roles_old);
  else
    update realms set roles_revision = roles_revision_next(roles_revision);
  end if;
  return null;
end
$$;

create trigger roles_revision_insert after insert on roles
  referencing new table as roles_new
  for each statement execute function roles_revision_bump();
create trigger roles_revision_update after update on roles
  referencing old table as roles_old new table as roles_new
  for each statement execute function roles_revision_bump();
create trigger roles_revision_delete after delete on roles
  referencing old table as roles_old
  for each statement execute function roles_revision_bump();
create trigger roles_revision_truncate after truncate on roles
  for each statement execute function roles_revision_bump();
