-- The session-event stream (document 1, realm API table, GET /session-events; Limits): what a
-- bounded-state resource server replays to learn of revocations. Events are appended by the same
-- database function that appends the revocation log (0033_revocation_log.sql), so a revocation
-- that commits has both its log record and, for the kinds a verifier acts on, its event; one that
-- rolls back has neither. docs/resource-servers.md describes the event types and the cursor.

create sequence session_events_seq;

create table session_events (
  realm_id text not null,
  seq bigint not null,
  type text not null check (type in (
    'account_revoked', 'session_ended', 'refresh_family_revoked', 'grant_revoked', 'token_revoked',
    'key_compromised')),
  data jsonb not null,
  created_at timestamptz not null default now(),
  primary key (realm_id, seq)
);
create index session_events_time on session_events (created_at);

-- The highest seq pruned from a realm's stream: a cursor below it may have missed events (410).
create table session_event_horizons (
  realm_id text primary key,
  pruned_through bigint not null
);

create function session_event_append(p_realm text, p_kind text, p_record jsonb) returns void
language plpgsql as $$
declare
  t text;
  d jsonb;
begin
  if p_kind = 'revocation' then
    if p_record->>'target' = 'user' then
      t := 'account_revoked';
      d := jsonb_build_object('user_id', p_record->'user_id', 'revoked_before', p_record->'revoked_before');
    elsif p_record->>'target' = 'session' then
      t := 'session_ended';
      d := jsonb_build_object('session_id', p_record->'session_id', 'user_id', p_record->'user_id');
    elsif p_record->>'target' = 'jti' then
      t := 'token_revoked';
      d := jsonb_build_object('jti', p_record->'jti', 'expires_at', p_record->'expires_at');
    else
      return;
    end if;
  elsif p_kind = 'key_compromised' then
    -- From signing_keys (kid) or from an emergency rotation's token_revocations row (jti = kid).
    t := 'key_compromised';
    d := jsonb_build_object('kid', coalesce(p_record->'kid', p_record->'jti'));
  elsif p_kind = 'refresh_family_revoked' then
    t := 'refresh_family_revoked';
    d := jsonb_build_object('family_id', p_record->'family_id', 'session_id', p_record->'session_id',
      'user_id', p_record->'user_id', 'grant_id', p_record->'grant_id');
  elsif p_kind = 'grant_revoked' then
    t := 'grant_revoked';
    d := jsonb_build_object('grant_id', p_record->'grant_id', 'user_id', p_record->'user_id',
      'client_id', p_record->'client_id');
  else
    return;
  end if;
  -- One writer per realm at a time until commit: seq order is then commit order within a realm,
  -- so a reader that has seen seq n can never later find a committed event of that realm below n.
  perform pg_advisory_xact_lock(hashtextextended('proudauth.session_events:' || p_realm, 0));
  insert into session_events (realm_id, seq, type, data)
    values (p_realm, nextval('session_events_seq'), t, jsonb_strip_nulls(d));
  -- Delivered at commit (and never for a rollback): wakes the long polls of this realm.
  perform pg_notify('proudauth_session_events', p_realm);
end;
$$;

create or replace function revocation_log_append(realm text, kind text, record jsonb) returns void
language sql as $$
  insert into revocation_log (realm_id, kind, record) values (realm, kind, record);
  select session_event_append(realm, kind, record);
$$;
