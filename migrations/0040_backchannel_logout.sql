-- OpenID Connect Back-Channel Logout 1.0 (document 2, Delivery semantics 5; Revocation exposure;
-- Data lifecycle 3). A client registers backchannel_logout_uri; every client that was handed a code
-- or a refresh family in a session is remembered against it; when the session ends (its revoked_at
-- is set, by any path: sign-out, administrator revocation, account-wide revocation, suspension,
-- deletion), a trigger queues one logout delivery per such client in the same transaction. The
-- worker (task backchannel_logout.deliver) signs the logout token and POSTs it, retrying up to 8
-- times. docs/logout-and-signals.md describes it.

alter table clients add column backchannel_logout_uri text;
alter table clients add column backchannel_logout_session_required boolean not null default false;

-- Which clients took part in a session: the receivers of its logout tokens.
create table session_clients (
  realm_id text not null,
  session_id text not null,
  client_id text not null,
  user_id text not null,
  created_at timestamptz not null default now(),
  primary key (realm_id, session_id, client_id),
  foreign key (realm_id, session_id) references sessions (realm_id, id) on delete cascade
);
create index session_clients_user on session_clients (realm_id, user_id);

create function session_clients_capture() returns trigger language plpgsql as $$
begin
  if new.session_id is not null then
    insert into session_clients (realm_id, session_id, client_id, user_id)
      values (new.realm_id, new.session_id, new.client_id, new.user_id)
      on conflict do nothing;
  end if;
  return null;
end;
$$;

create trigger session_clients_codes after insert on authorization_codes
  for each row execute function session_clients_capture();
create trigger session_clients_families after insert on refresh_families
  for each row execute function session_clients_capture();

create table backchannel_logout_deliveries (
  realm_id text not null,
  -- Also the jti of the logout token: every attempt of one delivery carries the same one.
  id text not null,
  client_id text not null,
  user_id text not null,
  session_id text not null,
  state text not null check (state in ('pending', 'retrying', 'delivered', 'failed')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null,
  locked_by text,
  locked_until timestamptz,
  last_attempt_at timestamptz,
  last_status integer,
  last_category text,
  delivered_at timestamptz,
  created_at timestamptz not null,
  primary key (realm_id, id)
);
create index backchannel_logout_due on backchannel_logout_deliveries (next_attempt_at)
  where state in ('pending', 'retrying');
create index backchannel_logout_created on backchannel_logout_deliveries (created_at);
create index backchannel_logout_user on backchannel_logout_deliveries (realm_id, user_id);

create function backchannel_logout_queue() returns trigger language plpgsql as $$
begin
  insert into backchannel_logout_deliveries
      (realm_id, id, client_id, user_id, session_id, state, next_attempt_at, created_at)
    select new.realm_id, 'blo_' || replace(gen_random_uuid()::text, '-', ''), sc.client_id, new.user_id,
           new.id, 'pending', new.revoked_at, new.revoked_at
      from session_clients sc
      join clients c on c.realm_id = sc.realm_id and c.client_id = sc.client_id
     where sc.realm_id = new.realm_id and sc.session_id = new.id
       and c.state = 'active' and c.backchannel_logout_uri is not null;
  return null;
end;
$$;

create trigger backchannel_logout_sessions after update on sessions
  for each row when (old.revoked_at is null and new.revoked_at is not null)
  execute function backchannel_logout_queue();
