// SQL for sign-in transactions. Mutable fields are written back whole by saveTransaction after a
// step ran on the locked row.
import { type Companion, together } from '../platform/db/companions.ts';
import { maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import type { SigninTx } from './transaction.ts';

export interface TxRow {
  realm_id: string;
  id: string;
  mode: SigninTx['mode'];
  binding_digest: string;
  status: SigninTx['status'];
  intent: SigninTx['intent'];
  client_id: string;
  redirect_uri: string;
  response_mode: SigninTx['responseMode'];
  scopes: string[];
  resources: string[];
  state: string | null;
  nonce: string | null;
  code_challenge: string;
  prompt: string[];
  max_age: number | null;
  acr_values: string[];
  login_hint: string | null;
  ui_locales: string | null;
  user_agent: string | null;
  organization: string | null;
  organization_id: string | null;
  identifier: string | null;
  user_id: string | null;
  completed_factors: SigninTx['completedFactors'];
  failures: number;
  error: SigninTx['error'];
  remember_me: boolean;
  transient: boolean;
  consent_scopes: string[] | null;
  pending_totp_sealed: string | null;
  session_id: string | null;
  account_confirmed: boolean;
  certificate_multi_factor: boolean;
  registration_decoy: { display_name: string | null; verify_email: boolean } | null;
  redirect_to: string | null;
  expires_at: Date;
  created_at: Date;
  updated_at: Date;
  completed_at: Date | null;
}

export interface StoredTx {
  tx: SigninTx;
  bindingDigest: string;
}

export const fromRow = (r: TxRow): StoredTx => ({
  bindingDigest: r.binding_digest,
  tx: {
    realmId: r.realm_id,
    id: r.id,
    mode: r.mode,
    status: r.status,
    intent: r.intent,
    clientId: r.client_id,
    redirectUri: r.redirect_uri,
    responseMode: r.response_mode,
    scopes: r.scopes,
    resources: r.resources,
    state: r.state,
    nonce: r.nonce,
    codeChallenge: r.code_challenge,
    prompt: r.prompt,
    maxAge: r.max_age,
    acrValues: r.acr_values,
    loginHint: r.login_hint,
    uiLocales: r.ui_locales,
    userAgent: r.user_agent,
    organization: r.organization,
    organizationId: r.organization_id,
    identifier: r.identifier,
    userId: r.user_id,
    completedFactors: r.completed_factors,
    failures: r.failures,
    error: r.error,
    rememberMe: r.remember_me,
    transient: r.transient,
    consentScopes: r.consent_scopes,
    pendingTotpSealed: r.pending_totp_sealed,
    sessionId: r.session_id,
    accountConfirmed: r.account_confirmed,
    certificateMultiFactor: r.certificate_multi_factor,
    registrationDecoy: r.registration_decoy
      ? {
          displayName: r.registration_decoy.display_name,
          verifyEmail: r.registration_decoy.verify_email,
        }
      : null,
    redirectTo: r.redirect_to,
    expiresAt: new Date(r.expires_at),
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    completedAt: r.completed_at ? new Date(r.completed_at) : null,
  },
});

/** The insert of a new transaction, for a caller that writes it with its audit record (create.ts). */
export const transactionInsert = (
  t: SigninTx,
  bindingDigest: string,
): { sql: string; params: unknown[] } => ({
  sql: `insert into signin_transactions (realm_id, id, mode, binding_digest, status, intent, client_id,
       redirect_uri, response_mode, scopes, resources, state, nonce, code_challenge, prompt, max_age, acr_values,
       login_hint, ui_locales, user_agent, organization, user_id, completed_factors, session_id,
       expires_at, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21,
       $22, $23, $24, $25, $26, $26)`,
  params: [
    t.realmId,
    t.id,
    t.mode,
    bindingDigest,
    t.status,
    t.intent,
    t.clientId,
    t.redirectUri,
    t.responseMode,
    t.scopes,
    t.resources,
    t.state,
    t.nonce,
    t.codeChallenge,
    t.prompt,
    t.maxAge,
    t.acrValues,
    t.loginHint,
    t.uiLocales,
    t.userAgent,
    t.organization,
    t.userId,
    t.completedFactors,
    t.sessionId,
    t.expiresAt,
    t.createdAt,
  ],
});

export const SELECT = 'select * from signin_transactions where realm_id = $1 and id = $2';

export async function findTransaction(q: Queryable, realmId: string, id: string): Promise<StoredTx | null> {
  const row = await maybeOne<TxRow>(q, SELECT, [realmId, id]);
  return row ? fromRow(row) : null;
}

/** Locks the row for the rest of the transaction, so two steps on one transaction never interleave. */
export async function lockTransaction(q: Tx, realmId: string, id: string): Promise<StoredTx | null> {
  const row = await maybeOne<TxRow>(q, `${SELECT} for update`, [realmId, id]);
  return row ? fromRow(row) : null;
}

/** Writes the transaction's mutable fields back; `along`, another write of the step, in the same statement. */
export async function saveTransaction(
  q: Tx,
  t: SigninTx,
  now: Date,
  along?: Companion | null,
): Promise<void> {
  const update: Companion = {
    sql: `update signin_transactions set status = $3, identifier = $4, user_id = $5, completed_factors = $6,
       failures = $7, error = $8, remember_me = $9, transient = $10, consent_scopes = $11,
       pending_totp_sealed = $12, redirect_to = $13, completed_at = $14, updated_at = $15,
       session_id = $16, account_confirmed = $17, organization_id = $18, registration_decoy = $19,
       certificate_multi_factor = $20
     where realm_id = $1 and id = $2`,
    params: [
      t.realmId,
      t.id,
      t.status,
      t.identifier,
      t.userId,
      t.completedFactors,
      t.failures,
      t.error,
      t.rememberMe,
      t.transient,
      t.consentScopes,
      t.pendingTotpSealed,
      t.redirectTo,
      t.completedAt,
      now,
      t.sessionId,
      t.accountConfirmed,
      t.organizationId,
      t.registrationDecoy
        ? JSON.stringify({
            display_name: t.registrationDecoy.displayName,
            verify_email: t.registrationDecoy.verifyEmail,
          })
        : null,
      t.certificateMultiFactor === true,
    ],
  };
  const joined = along ? together(update, along) : update;
  await q.query(joined.sql, joined.params);
}
