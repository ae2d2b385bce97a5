-- A browser transaction started while an SSO session was live carries that session, so completion
-- reuses it instead of creating another (spec doc 1, sign-in completion; evaluation stage 1).
alter table signin_transactions add column session_id text;
alter table signin_transactions add column account_confirmed boolean not null default false;
