-- Sign-in transactions (spec doc 1, "Sign-in transaction state" and its state table), SSO
-- sessions, one-time authorization codes, TOTP and recovery-code factors, and stored consents.
-- Bearer values (continuation tokens, cookies, CSRF tokens, codes) are stored only as digests.

alter table clients add column require_mfa boolean not null default false;
alter table clients add column allow_remember_me boolean not null default true;

create table signin_transactions (
  realm_id text not null references realms (id),
  id text not null,
  mode text not null check (mode in ('browser', 'headless')),
  binding_digest text not null,
  status text not null check (status in ('pending', 'completed', 'cancelled', 'expired', 'failed')),
  intent text not null check (intent in ('login', 'register', 'step_up', 'invitation', 'device')),
  client_id text not null,
  redirect_uri text not null,
  response_mode text not null check (response_mode in ('query', 'query.jwt', 'jwt')),
  scopes text[] not null,
  resources text[] not null,
  state text,
  nonce text,
  code_challenge text not null,
  prompt text[] not null default '{}',
  max_age integer,
  acr_values text[] not null default '{}',
  login_hint text,
  ui_locales text,
  user_agent text,
  organization text,
  identifier text,
  user_id text,
  completed_factors text[] not null default '{}',
  failures integer not null default 0,
  error text,
  remember_me boolean not null default false,
  transient boolean not null default false,
  consent_scopes text[],
  pending_totp_sealed text,
  redirect_to text,
  expires_at timestamptz not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  completed_at timestamptz,
  primary key (realm_id, id)
);
create index signin_transactions_expiry on signin_transactions (expires_at) where status = 'pending';

create table sessions (
  realm_id text not null references realms (id),
  id text not null,
  user_id text not null,
  cookie_digest text,
  auth_time timestamptz not null,
  amr text[] not null,
  acr text not null,
  mfa boolean not null,
  recovery_restricted boolean not null default false,
  remember_me boolean not null default false,
  transient boolean not null default false,
  created_at timestamptz not null,
  last_seen_at timestamptz not null,
  idle_expires_at timestamptz not null,
  absolute_expires_at timestamptz not null,
  revoked_at timestamptz,
  revoked_reason text,
  primary key (realm_id, id),
  foreign key (realm_id, user_id) references users (realm_id, id)
);
create index sessions_user on sessions (realm_id, user_id) where revoked_at is null;
create unique index sessions_cookie on sessions (realm_id, cookie_digest) where cookie_digest is not null;

create table authorization_codes (
  realm_id text not null references realms (id),
  code_digest text not null,
  client_id text not null,
  redirect_uri text not null,
  code_challenge text not null,
  nonce text,
  scopes text[] not null,
  resources text[] not null,
  user_id text not null,
  session_id text not null,
  auth_time timestamptz not null,
  amr text[] not null,
  acr text not null,
  transaction_id text not null,
  expires_at timestamptz not null,
  consumed_at timestamptz,
  created_at timestamptz not null,
  primary key (realm_id, code_digest)
);

create table totp_credentials (
  realm_id text not null,
  user_id text not null,
  secret_sealed text not null,
  last_used_step bigint,
  created_at timestamptz not null,
  primary key (realm_id, user_id),
  foreign key (realm_id, user_id) references users (realm_id, id)
);

create table recovery_codes (
  realm_id text not null,
  user_id text not null,
  code_digest text not null,
  batch_id text not null,
  used_at timestamptz,
  created_at timestamptz not null,
  primary key (realm_id, user_id, code_digest),
  foreign key (realm_id, user_id) references users (realm_id, id)
);

create table consents (
  realm_id text not null,
  user_id text not null,
  client_id text not null,
  scopes text[] not null,
  created_at timestamptz not null,
  updated_at timestamptz not null,
  primary key (realm_id, user_id, client_id),
  foreign key (realm_id, user_id) references users (realm_id, id)
);
