-- The built-in `account` client (the account page's public browser client, docs/login-ui.md) for
-- realms created before it existed. New realms get it at creation. A realm that already has a
-- client of its own named `account` keeps it and gets no built-in one. The redirect URI is
-- derived from server.public_origin at run time, so none is stored. The id follows the cli_
-- prefix with 26 characters of the identifier alphabet (hex digits are a subset of it).
insert into clients (realm_id, id, client_id, name, type, builtin, state, redirect_uris, grant_types,
  token_endpoint_auth_method, consent_mode, created_at, updated_at)
select r.id, 'cli_' || substr(md5(r.id || ':account:' || clock_timestamp()::text), 1, 26), 'account',
  'Account', 'spa', true, 'active', '{}', array['authorization_code', 'refresh_token'], 'none', 'implicit',
  now(), now()
from realms r
where not exists (select 1 from clients c where c.realm_id = r.id and c.client_id = 'account');
