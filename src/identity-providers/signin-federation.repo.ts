// SQL of the sign-in state federation keeps: the requests sent to an upstream and not back yet
// (federation_requests, claimed once by their state), and what the upstream said about a
// transaction (signin_federation). Both go with their transaction. Every statement filters on the
// realm.
import type { Queryable } from '../platform/db/db.ts';

export interface FederationRequestRow {
  realm_id: string;
  id: string;
  transaction_id: string;
  provider_id: string;
  state_digest: string;
  browser_digest: string | null;
  nonce: string;
  code_verifier: string;
  redirect_uri: string;
  created_at: Date;
  expires_at: Date;
  consumed_at: Date | null;
  /** SAML: the ID of the AuthnRequest sent (the InResponseTo the answer must carry). */
  saml_request_id: string | null;
  /** SAML: what the assertion consumer service made of the IdP's answer. */
  saml_outcome: unknown;
}

export interface NewFederationRequest {
  id: string;
  transactionId: string;
  providerId: string;
  stateDigest: string;
  browserDigest: string | null;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
  expiresAt: Date;
  samlRequestId?: string | null;
}

export async function insertFederationRequest(
  q: Queryable,
  realmId: string,
  r: NewFederationRequest,
  now: Date,
): Promise<void> {
  await q.query(
    `insert into federation_requests (realm_id, id, transaction_id, provider_id, state_digest, browser_digest, nonce,
       code_verifier, redirect_uri, created_at, expires_at, saml_request_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
    [
      realmId,
      r.id,
      r.transactionId,
      r.providerId,
      r.stateDigest,
      r.browserDigest,
      r.nonce,
      r.codeVerifier,
      r.redirectUri,
      now,
      r.expiresAt,
      r.samlRequestId ?? null,
    ],
  );
}

/** SAML: the open request a RelayState names, not answered, used or expired yet. */
export async function findOpenSamlRequest(
  q: Queryable,
  realmId: string,
  stateDigest: string,
  now: Date,
): Promise<FederationRequestRow | null> {
  const r = await q.query<FederationRequestRow>(
    `select * from federation_requests
      where realm_id = $1 and state_digest = $2 and saml_request_id is not null and saml_outcome is null
        and consumed_at is null and expires_at > $3`,
    [realmId, stateDigest, now],
  );
  return r.rows[0] ?? null;
}

/** SAML: keeps what the ACS made of the answer, once; false when the request was answered already. */
export async function answerSamlRequest(
  q: Queryable,
  realmId: string,
  id: string,
  outcome: unknown,
  now: Date,
): Promise<boolean> {
  const r = await q.query(
    `update federation_requests set saml_outcome = $3
      where realm_id = $1 and id = $2 and saml_outcome is null and consumed_at is null and expires_at > $4`,
    [realmId, id, JSON.stringify(outcome), now],
  );
  return (r.rowCount ?? 0) > 0;
}

/**
 * SAML: remembers an accepted assertion id until it expires; false when it was accepted before (a
 * replay), by this process or any other on the same database.
 */
export async function rememberSamlAssertion(
  q: Queryable,
  realmId: string,
  providerId: string,
  assertionId: string,
  expiresAt: Date,
  now: Date,
): Promise<boolean> {
  const r = await q.query(
    `insert into saml_assertion_ids (realm_id, provider_id, assertion_id, expires_at) values ($1, $2, $3, $4)
     on conflict (realm_id, provider_id, assertion_id) do update set expires_at = excluded.expires_at
       where saml_assertion_ids.expires_at <= $5`,
    [realmId, providerId, assertionId, expiresAt, now],
  );
  return (r.rowCount ?? 0) > 0;
}

export async function deleteExpiredSamlAssertions(q: Queryable, now: Date, batch: number): Promise<number> {
  const r = await q.query(
    `delete from saml_assertion_ids where (realm_id, provider_id, assertion_id) in (
       select realm_id, provider_id, assertion_id from saml_assertion_ids where expires_at <= $1 limit ${batch})`,
    [now],
  );
  return r.rowCount ?? 0;
}

/**
 * Takes the request a state names, once: a second callback with the same state (a replay) finds it
 * used, and an expired one is not taken.
 */
export async function claimFederationRequest(
  q: Queryable,
  realmId: string,
  stateDigest: string,
  now: Date,
): Promise<FederationRequestRow | null> {
  const r = await q.query<FederationRequestRow>(
    `update federation_requests set consumed_at = $3
      where realm_id = $1 and state_digest = $2 and consumed_at is null and expires_at > $3
      returning *`,
    [realmId, stateDigest, now],
  );
  return r.rows[0] ?? null;
}

export type SigninFederationStatus = 'upstream_unavailable' | 'link_pending' | 'authenticated';

/** What the upstream proved, kept while a link waits for the existing account's proof. */
export interface PendingIdentity {
  email: string | null;
  emailVerified: boolean;
  name: string | null;
}

export interface SigninFederationRow {
  realm_id: string;
  transaction_id: string;
  provider_id: string;
  status: SigninFederationStatus;
  upstream_issuer: string | null;
  upstream_subject: string | null;
  claims: PendingIdentity | Record<string, never>;
  upstream_mfa: boolean;
  conflict: boolean;
  linked_identity_id: string | null;
  updated_at: Date;
}

export interface SigninFederation {
  providerId: string;
  status: SigninFederationStatus;
  issuer: string | null;
  subject: string | null;
  claims: PendingIdentity | Record<string, never>;
  upstreamMfa: boolean;
  conflict: boolean;
  linkedIdentityId: string | null;
}

export async function saveSigninFederation(
  q: Queryable,
  realmId: string,
  transactionId: string,
  f: SigninFederation,
  now: Date,
): Promise<void> {
  await q.query(
    `insert into signin_federation (realm_id, transaction_id, provider_id, status, upstream_issuer, upstream_subject,
       claims, upstream_mfa, conflict, linked_identity_id, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
     on conflict (realm_id, transaction_id) do update
       set provider_id = excluded.provider_id, status = excluded.status, upstream_issuer = excluded.upstream_issuer,
           upstream_subject = excluded.upstream_subject, claims = excluded.claims, upstream_mfa = excluded.upstream_mfa,
           conflict = excluded.conflict, linked_identity_id = excluded.linked_identity_id,
           updated_at = excluded.updated_at`,
    [
      realmId,
      transactionId,
      f.providerId,
      f.status,
      f.issuer,
      f.subject,
      JSON.stringify(f.claims),
      f.upstreamMfa,
      f.conflict,
      f.linkedIdentityId,
      now,
    ],
  );
}

export async function findSigninFederation(
  q: Queryable,
  realmId: string,
  transactionId: string,
): Promise<SigninFederationRow | null> {
  const r = await q.query<SigninFederationRow>(
    'select * from signin_federation where realm_id = $1 and transaction_id = $2',
    [realmId, transactionId],
  );
  const row = r.rows[0];
  if (!row) return null;
  return { ...row, claims: typeof row.claims === 'string' ? JSON.parse(row.claims) : row.claims };
}

export async function deleteSigninFederation(
  q: Queryable,
  realmId: string,
  transactionId: string,
): Promise<void> {
  await q.query('delete from signin_federation where realm_id = $1 and transaction_id = $2', [
    realmId,
    transactionId,
  ]);
}

/** A deleted connection takes its sign-ins in flight with it. */
export async function forgetSigninsOfConnection(
  q: Queryable,
  realmId: string,
  providerId: string,
): Promise<void> {
  await q.query('delete from federation_requests where realm_id = $1 and provider_id = $2', [
    realmId,
    providerId,
  ]);
  await q.query('delete from signin_federation where realm_id = $1 and provider_id = $2', [
    realmId,
    providerId,
  ]);
}
