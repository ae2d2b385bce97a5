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

-- Shared Signals (OpenID SSF 1.0 transmitter; document 1, policy shared_signals; document 2,
-- Delivery semantics 5, Data lifecycle 3). A confidential client configures at most one push
-- stream; the changes below queue one event per stream that asked for its type, in the
-- transaction of the change, while the realm's shared_signals.enabled is true. Worker task
-- ssf.deliver signs each as a security event token and pushes it (RFC 8935).

create table ssf_streams (
  realm_id text not null,
  id text not null,
  client_id text not null,
  endpoint_url text not null,
  events_requested text[] not null,
  events_delivered text[] not null,
  description text,
  status text not null default 'enabled' check (status in ('enabled', 'paused', 'disabled')),
  status_reason text,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, id),
  unique (realm_id, client_id)
);

create table ssf_events (
  realm_id text not null,
  -- Also the SET's jti.
  id text not null,
  stream_id text not null,
  event_type text not null,
  -- The account the event is about; null for a verification event.
  user_id text,
  data jsonb not null,
  state text not null check (state in ('pending', 'retrying', 'delivered', 'failed', 'expired')),
  attempts integer not null default 0,
  next_attempt_at timestamptz not null,
  locked_by text,
  locked_until timestamptz,
  last_attempt_at timestamptz,
  last_status integer,
  last_category text,
  finished_at timestamptz,
  created_at timestamptz not null,
  primary key (realm_id, id),
  foreign key (realm_id, stream_id) references ssf_streams (realm_id, id) on delete cascade
);
create index ssf_events_due on ssf_events (next_attempt_at) where state in ('pending', 'retrying');
create index ssf_events_created on ssf_events (created_at) where state in ('pending', 'retrying');
create index ssf_events_finished on ssf_events (finished_at) where finished_at is not null;
create index ssf_events_user on ssf_events (realm_id, user_id);

create function ssf_emit(p_realm text, p_type text, p_user text, p_data jsonb) returns void
language plpgsql as $$
begin
  if not exists (
    select 1 from realms r
      join realm_policy_revisions p on p.realm_id = r.id and p.revision = r.policy_revision
     where r.id = p_realm and (p.policy #>> '{shared_signals,enabled}') = 'true') then
    return;
  end if;
  insert into ssf_events (realm_id, id, stream_id, event_type, user_id, data, state, next_attempt_at, created_at)
    select p_realm, 'set_' || replace(gen_random_uuid()::text, '-', ''), s.id, p_type, p_user, p_data,
           'pending', now(), now()
      from ssf_streams s
     where s.realm_id = p_realm and s.status <> 'disabled' and p_type = any (s.events_delivered);
end;
$$;

create function ssf_capture() returns trigger language plpgsql as $$
declare
  caep text := 'https://schemas.openid.net/secevent/caep/event-type/';
  risc text := 'https://schemas.openid.net/secevent/risc/event-type/';
begin
  if tg_table_name = 'sessions' then
    perform ssf_emit(new.realm_id, caep || 'session-revoked', new.user_id,
      jsonb_build_object('session_id', new.id, 'at', new.revoked_at));
  elsif tg_table_name = 'users' then
    perform ssf_emit(new.realm_id, risc || 'account-disabled', new.id,
      jsonb_build_object('at', now()));
  elsif tg_table_name = 'password_credentials' then
    perform ssf_emit(new.realm_id, caep || 'credential-change', new.user_id,
      jsonb_build_object('credential_type', 'password',
        'change_type', case when tg_op = 'INSERT' then 'create' else 'update' end, 'at', now()));
  elsif tg_op = 'DELETE' then
    perform ssf_emit(old.realm_id, caep || 'credential-change', old.user_id,
      jsonb_build_object('credential_type', case when tg_table_name = 'totp_credentials' then 'app' else 'fido2-roaming' end,
        'change_type', 'delete', 'at', now()));
  else
    perform ssf_emit(new.realm_id, caep || 'credential-change', new.user_id,
      jsonb_build_object('credential_type', case when tg_table_name = 'totp_credentials' then 'app' else 'fido2-roaming' end,
        'change_type', 'create', 'at', now()));
  end if;
  return null;
end;
$$;

create trigger ssf_sessions after update on sessions
  for each row when (old.revoked_at is null and new.revoked_at is not null)
  execute function ssf_capture();
create trigger ssf_users after update on users
  for each row when (old.state is distinct from new.state and new.state in ('suspended', 'locked', 'deleted'))
  execute function ssf_capture();
create trigger ssf_passwords_insert after insert on password_credentials
  for each row execute function ssf_capture();
create trigger ssf_passwords_update after update on password_credentials
  for each row when (old.created_at is distinct from new.created_at)
  execute function ssf_capture();
create trigger ssf_totp after insert or delete on totp_credentials
  for each row execute function ssf_capture();
create trigger ssf_passkeys after insert or delete on webauthn_credentials
  for each row execute function ssf_capture();
