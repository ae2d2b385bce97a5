-- Mutual-TLS client authentication with a CA-issued certificate (RFC 8705 section 2.1,
-- docs/oauth-mtls.md): a tls_client_auth client names the one subject DN or subject alternative
-- name its certificate must carry and the CA certificates (base64 DER) that may issue it. Null for
-- every other method.
alter table clients add column tls_client_auth jsonb
  check (tls_client_auth is null or jsonb_typeof(tls_client_auth) = 'object');

-- A refresh family issued to a public client that presented a client certificate is bound to that
-- certificate (RFC 8705 section 4): its refresh tokens are accepted only with the same certificate.
alter table refresh_families add column cert_thumbprint text;
