-- Pushed authorization requests (RFC 9126): the parameters a client sent to the PAR endpoint,
-- found by the digest of the request_uri handed back, bound to that client, usable once within
-- 60 seconds (docs/oauth-endpoints.md). A row is deleted when it is used; the sign-in cleanup
-- removes the rest once expired.
create table pushed_authorization_requests (
  realm_id text not null references realms (id),
  request_digest text not null,
  client_id text not null,
  params jsonb not null,
  expires_at timestamptz not null,
  created_at timestamptz not null,
  primary key (realm_id, request_digest)
);
create index pushed_authorization_requests_expiry on pushed_authorization_requests (expires_at);

-- A client that must push its authorization requests: the authorization endpoint and the
-- headless start refuse it a request without a PAR request_uri.
alter table clients add column require_pushed_authorization_requests boolean not null default false;
