-- Workload federation (docs/workload-federation.md): a service client trusts JWTs that an outside
-- issuer (a CI system, a Kubernetes cluster) signs for a workload, presented with the RFC 7523
-- jwt-bearer grant. Each rule names the issuer, the audience the assertion must carry, where the
-- issuer's public keys are (a URL fetched through the egress guard, or 1..20 keys inline) and the
-- claim values a workload must show (document 2, Limits, "Workload federation"). Assertion ids are
-- kept single-use in client_assertion_jtis, under the client that the assertion authenticated.
create table workload_federations (
  realm_id text not null,
  id text not null,
  client_row_id text not null,
  name text not null,
  issuer text not null,
  audience text not null,
  jwks_uri text,
  jwks jsonb,
  claims jsonb not null check (jsonb_typeof(claims) = 'object'),
  created_at timestamptz not null,
  primary key (realm_id, id),
  foreign key (realm_id, client_row_id) references clients (realm_id, id),
  check ((jwks_uri is null) <> (jwks is null)),
  check (jwks is null or jsonb_typeof(jwks -> 'keys') = 'array')
);
create index workload_federations_client on workload_federations (realm_id, client_row_id, issuer);
