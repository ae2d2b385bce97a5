-- The revocation log (document 2, "Revocation log record kinds" and "Backup and restore"): one row
-- per revocation-like change, written by trigger in the transaction of the change itself, so no
-- write path (the API, the worker, imports, a hand-written statement) can forget it, and a change
-- that rolls back leaves no row. identity-cli revocation-log exports the rows as JSON lines for
-- storage outside the database; restore-reconcile re-applies such a file over a restored backup.
-- Records hold identifiers, states, times and digests only: the triggers never copy a verifier,
-- a sealed secret or a profile value. seq orders the records and is the session-event cursor.
create table revocation_log (
  seq bigserial primary key,
  realm_id text not null,
  kind text not null check (kind in ('revocation', 'tombstone', 'key_compromised', 'user_state',
    'invitation_consumed', 'password_changed', 'client_credential_revoked',
    'automation_credential_revoked', 'membership_state', 'refresh_rotated', 'refresh_family_revoked',
    'grant_revoked', 'recovery_code_consumed', 'recovery_codes_replaced', 'hotp_counter',
    'initial_access_token', 'registration_token_rotated')),
  record jsonb not null,
  created_at timestamptz not null default now()
);
create index revocation_log_time on revocation_log (created_at);
create index revocation_log_realm_seq on revocation_log (realm_id, seq);

create function revocation_log_append(realm text, kind text, record jsonb) returns void
language sql as $$
  insert into revocation_log (realm_id, kind, record) values (realm, kind, record)
$$;

create function revocation_log_capture() returns trigger language plpgsql as $$
begin
  if tg_table_name = 'token_revocations' then
    perform revocation_log_append(new.realm_id, case when new.kind = 'key' then 'key_compromised' else 'revocation' end,
      jsonb_build_object('target', 'jti', 'jti', new.jti, 'token_kind', new.kind, 'reason', new.reason,
        'expires_at', new.expires_at, 'at', new.created_at));
  elsif tg_table_name = 'user_revocations' then
    perform revocation_log_append(new.realm_id, 'revocation',
      jsonb_build_object('target', 'user', 'user_id', new.user_id, 'revoked_before', new.revoked_before));
  elsif tg_table_name = 'sessions' then
    perform revocation_log_append(new.realm_id, 'revocation',
      jsonb_build_object('target', 'session', 'session_id', new.id, 'user_id', new.user_id,
        'reason', new.revoked_reason, 'at', new.revoked_at));
  elsif tg_table_name = 'clients' then
    perform revocation_log_append(new.realm_id, 'revocation',
      jsonb_build_object('target', 'client', 'client_row_id', new.id, 'client_id', new.client_id,
        'state', new.state, 'at', new.updated_at));
  elsif tg_table_name = 'oauth_grants' then
    perform revocation_log_append(new.realm_id, 'grant_revoked',
      jsonb_build_object('grant_id', new.id, 'user_id', new.user_id, 'client_id', new.client_id,
        'reason', new.revoked_reason, 'at', new.revoked_at));
  elsif tg_table_name = 'refresh_families' then
    perform revocation_log_append(new.realm_id, 'refresh_family_revoked',
      jsonb_build_object('family_id', new.id, 'grant_id', new.grant_id, 'user_id', new.user_id,
        'session_id', new.session_id, 'reason', new.revoked_reason, 'at', new.revoked_at));
  elsif tg_table_name = 'refresh_tokens' then
    perform revocation_log_append(new.realm_id, 'refresh_rotated',
      jsonb_build_object('family_id', new.family_id, 'token_digest', new.token_digest, 'at', new.rotated_at));
  elsif tg_table_name = 'users' then
    if new.state = 'deleted' then
      perform revocation_log_append(new.realm_id, 'tombstone',
        jsonb_build_object('user_id', new.id, 'at', new.updated_at));
    else
      perform revocation_log_append(new.realm_id, 'user_state',
        jsonb_build_object('user_id', new.id, 'state', new.state, 'at', new.updated_at));
    end if;
  elsif tg_table_name = 'signing_keys' then
    perform revocation_log_append(new.realm_id, 'key_compromised',
      jsonb_build_object('kid', new.kid, 'at', new.compromised_at));
  elsif tg_table_name = 'password_credentials' then
    perform revocation_log_append(new.realm_id, 'password_changed',
      jsonb_build_object('user_id', new.user_id, 'compromised', new.compromised, 'at', new.created_at));
  elsif tg_table_name = 'client_secrets' then
    perform revocation_log_append(new.realm_id, 'client_credential_revoked',
      jsonb_build_object('secret_id', new.id, 'client_row_id', new.client_row_id, 'at', new.revoked_at));
  elsif tg_table_name = 'memberships' then
    perform revocation_log_append(new.realm_id,
      case when old.state in ('invited', 'pending_approval') then 'invitation_consumed' else 'membership_state' end,
      jsonb_build_object('membership_id', new.id, 'organization_id', new.organization_id, 'user_id', new.user_id,
        'from', old.state, 'state', new.state, 'reason', new.ended_reason, 'at', new.updated_at));
  elsif tg_table_name = 'recovery_codes' then
    perform revocation_log_append(new.realm_id, 'recovery_code_consumed',
      jsonb_build_object('user_id', new.user_id, 'code_digest', new.code_digest, 'at', new.used_at));
  elsif tg_table_name = 'hotp_credentials' then
    perform revocation_log_append(new.realm_id, 'hotp_counter',
      jsonb_build_object('user_id', new.user_id, 'credential_id', new.id, 'counter', new.counter));
  end if;
  return null;
end;
$$;

-- A new batch of recovery codes replaces every earlier code of the account: one record per batch.
create function revocation_log_recovery_batch() returns trigger language plpgsql as $$
begin
  insert into revocation_log (realm_id, kind, record)
  select distinct realm_id, 'recovery_codes_replaced',
         jsonb_build_object('user_id', user_id, 'batch_id', batch_id, 'at', created_at)
    from recovery_codes_new;
  return null;
end;
$$;

create trigger revocation_log_token_revocations after insert on token_revocations
  for each row execute function revocation_log_capture();
create trigger revocation_log_user_revocations after insert or update on user_revocations
  for each row execute function revocation_log_capture();
create trigger revocation_log_sessions after update on sessions
  for each row when (old.revoked_at is null and new.revoked_at is not null)
  execute function revocation_log_capture();
create trigger revocation_log_clients after update on clients
  for each row when (old.state is distinct from new.state) execute function revocation_log_capture();
create trigger revocation_log_grants after update on oauth_grants
  for each row when (old.revoked_at is null and new.revoked_at is not null)
  execute function revocation_log_capture();
create trigger revocation_log_families after update on refresh_families
  for each row when (old.revoked_at is null and new.revoked_at is not null)
  execute function revocation_log_capture();
create trigger revocation_log_refresh_rotated after update on refresh_tokens
  for each row when (old.rotated_at is null and new.rotated_at is not null)
  execute function revocation_log_capture();
create trigger revocation_log_users after update on users
  for each row when (old.state is distinct from new.state) execute function revocation_log_capture();
create trigger revocation_log_signing_keys after update on signing_keys
  for each row when (new.state = 'compromised' and old.state <> 'compromised')
  execute function revocation_log_capture();
create trigger revocation_log_passwords_insert after insert on password_credentials
  for each row execute function revocation_log_capture();
-- A re-peppered verifier of the same password keeps created_at: no change of password.
create trigger revocation_log_passwords_update after update on password_credentials
  for each row when (old.created_at is distinct from new.created_at or (new.compromised and not old.compromised))
  execute function revocation_log_capture();
create trigger revocation_log_client_secrets after update on client_secrets
  for each row when (old.revoked_at is null and new.revoked_at is not null)
  execute function revocation_log_capture();
create trigger revocation_log_memberships after update on memberships
  for each row when (old.state is distinct from new.state) execute function revocation_log_capture();
create trigger revocation_log_recovery_used after update on recovery_codes
  for each row when (old.used_at is null and new.used_at is not null)
  execute function revocation_log_capture();
create trigger revocation_log_recovery_batch after insert on recovery_codes
  referencing new table as recovery_codes_new
  for each statement execute function revocation_log_recovery_batch();
create trigger revocation_log_hotp after update on hotp_credentials
  for each row when (old.counter is distinct from new.counter) execute function revocation_log_capture();
