-- X.509 certificate sign-in (docs/certificate-signin.md, issue 32).

-- The CA certificates a realm trusts to issue its users' sign-in certificates. multi_factor marks
-- an anchor whose certificates live on a smart card or PIV token that needs a PIN: such a
-- certificate is possession and knowledge at once. mapping_source names the certificate field that
-- names the account, mapping_identifier the kind of sign-in identifier that field is matched to.
create table certificate_trust_anchors (
  realm_id text not null references realms (id),
  id text not null,
  description text not null,
  certificate text not null,
  subject text not null,
  fingerprint_sha256 text not null,
  multi_factor boolean not null,
  mapping_source text not null check (mapping_source in ('san_email', 'san_upn', 'subject_email', 'subject_cn')),
  mapping_identifier text not null check (mapping_identifier in ('email', 'username')),
  not_after timestamptz not null,
  created_at timestamptz not null,
  primary key (realm_id, id)
);
create unique index certificate_trust_anchors_fingerprint on certificate_trust_anchors (realm_id, fingerprint_sha256);

-- A certificate from a multi-factor anchor proved the second factor too (next-actions.ts).
alter table signin_transactions add column certificate_multi_factor boolean not null default false;
