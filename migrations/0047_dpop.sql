-- DPoP (RFC 9449; spec doc 1, Authentication 8). Every proof is single use across all processes:
-- its key thumbprint and jti, digested together, are recorded here until the proof could no longer
-- pass the age check anyway; a second insert of the same pair finds the row and the proof is a
-- replay. tokens.cleanup deletes expired rows. No personal data: a digest and a time.
create table dpop_proof_jtis (
  realm_id text not null,
  proof_digest text not null,
  expires_at timestamptz not null,
  primary key (realm_id, proof_digest)
);
create index dpop_proof_jtis_expiry on dpop_proof_jtis (expires_at);

-- A refresh family issued to a public client with a DPoP proof is bound to that key (RFC 9449
-- section 5): its refresh tokens are accepted only with a proof signed by the same key.
alter table refresh_families add column dpop_jkt text;
