-- A realm's uploaded logo (docs/login-ui.md, "Branding"): one image per realm, PNG, JPEG or WebP,
-- at most 128 KiB, its type taken from its first bytes at upload. The login UI and the account
-- page load it from this server's origin, so their Content-Security-Policy stays 'self'.
create table realm_logos (
  realm_id text primary key references realms (id) on delete cascade,
  content_type text not null check (content_type in ('image/png', 'image/jpeg', 'image/webp')),
  body bytea not null check (octet_length(body) between 1 and 131072),
  digest text not null,
  updated_at timestamptz not null
);
