-- Client administration (docs/api-clients.md): a free-text description, the URIs a client may
-- name after logout (validated like redirect URIs, matched exactly), and a version bumped by every
-- change, which is the client's ETag for If-Match.

alter table clients add column description text;
alter table clients add column post_logout_redirect_uris text[] not null default '{}';
alter table clients add column version integer not null default 1;
