-- What a client_credentials token reads besides the realm (the client with its secrets, its
-- service principal, the resource, the client's grant for it and the realm's active key) is
-- configuration that changes rarely, so each server process keeps what it last read
-- (src/oauth/grants/service-token-cache.ts). clients_revision says when that copy is stale: it
-- moves in the same transaction as every write to those tables, by trigger, so no write path (the
-- API, configuration as code, imports, emergency controls, the key lifecycle task, a hand-written
-- SQL statement) can forget it. The one frequent write, a secret's last_used_at, does not move it.
-- Revisions come from roles_revision_next (0023): at least the current time in milliseconds, so a
-- restored database never reaches again a revision a process copied before the restore.
alter table realms add column clients_revision bigint not null default 1;

create function clients_revision_bump() returns trigger language plpgsql as $$
begin
  -- Each branch reads only the transition tables its trigger declares.
  if tg_op = 'INSERT' then
    update realms set clients_revision = roles_revision_next(clients_revision)
     where id in (select realm_id from changed_new);
  elsif tg_op = 'DELETE' then
    update realms set clients_revision = roles_revision_next(clients_revision)
     where id in (select realm_id from changed_old);
  elsif tg_op = 'UPDATE' then
    update realms set clients_revision = roles_revision_next(clients_revision)
     where id in (select realm_id from changed_new union select realm_id from changed_old);
  else
    update realms set clients_revision = roles_revision_next(clients_revision);
  end if;
  return null;
end
$$;

-- One changed row (client_secrets updates, filtered by the trigger's condition).
create function clients_revision_bump_row() returns trigger language plpgsql as $$
begin
  update realms set clients_revision = roles_revision_next(clients_revision)
   where id in (old.realm_id, new.realm_id);
  return null;
end
$$;

do $$
declare
  t text;
begin
  foreach t in array array['clients', 'client_secrets', 'service_principals', 'resources',
                           'client_resource_grants', 'resource_introspectors', 'signing_keys'] loop
    execute format('create trigger %I after insert on %I referencing new table as changed_new
                      for each statement execute function clients_revision_bump()', t || '_clients_rev_insert', t);
    execute format('create trigger %I after delete on %I referencing old table as changed_old
                      for each statement execute function clients_revision_bump()', t || '_clients_rev_delete', t);
    execute format('create trigger %I after truncate on %I
                      for each statement execute function clients_revision_bump()', t || '_clients_rev_truncate', t);
    if t <> 'client_secrets' then
      execute format('create trigger %I after update on %I referencing old table as changed_old new table as changed_new
                        for each statement execute function clients_revision_bump()', t || '_clients_rev_update', t);
    end if;
  end loop;
end
$$;

-- A secret's use is recorded at most once a minute per secret and changes nothing a token reads.
create trigger client_secrets_clients_rev_update after update on client_secrets
  for each row when ((to_jsonb(old) - 'last_used_at') is distinct from (to_jsonb(new) - 'last_used_at'))
  execute function clients_revision_bump_row();
