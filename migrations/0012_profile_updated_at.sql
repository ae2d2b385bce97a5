-- When the profile a client can read (display name, identifiers) last changed: UserInfo's
-- updated_at (OpenID Connect Core 1.0 section 5.1). users.updated_at also moves on every sign-in
-- (last_login_at), required-action and state change, so the profile keeps its own time. Until
-- now no administration call changed a profile after creation, so created_at is exact for every
-- existing account.
alter table users add column profile_updated_at timestamptz;
update users set profile_updated_at = created_at;
alter table users alter column profile_updated_at set not null;
alter table users alter column profile_updated_at set default now();
