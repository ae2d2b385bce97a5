-- Account security (document 1, self-service factors, HOTP, remembered devices; abuse budgets):
-- pending factor enrollments, HOTP tokens, password history, remembered devices, and the shared
-- abuse-budget counters.

-- A factor being enrolled from /me: the secret sealed under the root key until a code proves it.
create table factor_enrollments (
  realm_id text not null,
  id text not null,
  user_id text not null,
  kind text not null check (kind in ('totp', 'hotp')),
  secret_sealed text not null,
  expires_at timestamptz not null,
  created_at timestamptz not null,
  primary key (realm_id, id),
  foreign key (realm_id, user_id) references users (realm_id, id) on delete cascade
);
create index factor_enrollments_user on factor_enrollments (realm_id, user_id, kind);

-- One HOTP token per account; `counter` is the next counter expected (only moves forward).
-- Resync attempts are counted per fixed 15-minute window.
create table hotp_credentials (
  realm_id text not null,
  user_id text not null,
  id text not null,
  secret_sealed text not null,
  counter bigint not null,
  resync_window_start timestamptz,
  resync_attempts integer not null default 0,
  created_at timestamptz not null,
  primary key (realm_id, user_id),
  foreign key (realm_id, user_id) references users (realm_id, id) on delete cascade
);

-- Earlier password verifiers, for password.history_count.
create table password_history (
  realm_id text not null,
  user_id text not null,
  hash text not null,
  pepper_version integer,
  created_at timestamptz not null,
  foreign key (realm_id, user_id) references users (realm_id, id) on delete cascade
);
create index password_history_user on password_history (realm_id, user_id, created_at desc);

-- A browser or headless client that completed MFA and asked to be remembered; the token is
-- stored as a digest.
create table remembered_devices (
  realm_id text not null,
  id text not null,
  user_id text not null,
  token_digest text not null,
  user_agent text,
  created_at timestamptz not null,
  expires_at timestamptz not null,
  last_used_at timestamptz,
  primary key (realm_id, id),
  foreign key (realm_id, user_id) references users (realm_id, id) on delete cascade
);
create unique index remembered_devices_token on remembered_devices (realm_id, token_digest);
create index remembered_devices_user on remembered_devices (realm_id, user_id);

-- Abuse budgets shared by every process: one counter is spread over a few shard rows per fixed
-- window, so concurrent requests for one hot key update different rows; the budget is the sum.
create table abuse_counters (
  bucket text not null,
  window_start timestamptz not null,
  shard smallint not null,
  hits integer not null,
  primary key (bucket, window_start, shard)
);
create index abuse_counters_window on abuse_counters (window_start);

-- A sign-in transaction's remembered-device facts: the valid device it presented (MFA may be
-- skipped) and the user's answer to the remember_device action.
create table signin_device_choices (
  realm_id text not null,
  transaction_id text not null,
  remember boolean,
  device_id text,
  primary key (realm_id, transaction_id),
  foreign key (realm_id, transaction_id) references signin_transactions (realm_id, id) on delete cascade
);

-- Authentication-flow facts of one sign-in transaction: the caller's network at the last step and
-- whether its challenge was answered and its review recorded.
create table signin_flow_state (
  realm_id text not null,
  transaction_id text not null,
  network text,
  challenge_passed boolean not null default false,
  reviewed boolean not null default false,
  primary key (realm_id, transaction_id),
  foreign key (realm_id, transaction_id) references signin_transactions (realm_id, id) on delete cascade
);
