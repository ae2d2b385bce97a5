-- Which claims a client's ID tokens carry (decision D21, docs/api-clients.md): `standard`, the
-- standard claims of the scopes the user granted (profile, email, phone), or `minimal`, only the
-- protocol claims (sub, auth_time, nonce, acr, amr, sid, at_hash); UserInfo answers the scope
-- claims either way.
alter table clients add column id_token_claims text not null default 'standard'
  check (id_token_claims in ('standard', 'minimal'));
