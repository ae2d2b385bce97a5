// Issues the tokens of one token response: an access token for one resource (a signed RFC 9068
// JWT, or an opaque reference stored by digest), and the ID token beside it.

import {
  type AccessTokenClaims,
  type AccessTokenInput,
  type Actor,
  accessTokenLifetimeSeconds,
  type Confirmation,
  issueOpaqueAccessToken,
  signAccessToken,
} from '../access/access-token.ts';
import { issuerOf } from '../kernel/audiences.ts';
import type { Signer } from '../keys/key-store.ts';
import type { Queryable } from '../platform/db/db.ts';
import type { RealmRef } from '../resources/index.ts';
import type { Target } from '../resources/resource-target.ts';
import { signIdToken } from './tokens/id-token.ts';

/** The active key failed to sign: an outage of the token service, not a bad request. */
export class SigningError extends Error {
  constructor(cause: unknown) {
    super('signing failed', { cause });
    this.name = 'SigningError';
  }
}

async function signing<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw new SigningError(e);
  }
}

export interface IssuerSettings {
  publicOrigin: string;
  maxAccessTokenTtlMs: number;
  idTokenTtlMs: number;
  /**
   * The request's client certificate (RFC 8705): access tokens it issues carry it as cnf, unless
   * the request bound them to a DPoP key (AccessTokenRequest.cnf), which wins.
   */
  confirmation?: Confirmation | null;
}

/** What the subject proved and when; null for service principals. */
export interface Authentication {
  sessionId: string | null;
  authTime: Date;
  amr: readonly string[];
  acr: string;
}

export interface AccessTokenRequest {
  realm: RealmRef;
  clientId: string;
  subject: string;
  target: Target;
  scopes: readonly string[];
  /** Audiences a JWT also serves after the resource's (userinfoShare in grants/user-tokens.ts). */
  extraAudiences?: readonly string[];
  authentication: Authentication | null;
  act?: Actor | null;
  /** A token exchange: the client of the user's grant behind the subject token. */
  grantClientId?: string | null;
  orgId?: string | null;
  /** A token exchange never outlives the token it came from. */
  notAfterSeconds?: number;
  /** Support access: the grant behind the token. */
  supportGrantId?: string | null;
  /** The key the token is bound to (DPoP `jkt`). */
  cnf?: Confirmation | null;
  /** What before_token_issuance hooks added (JWT access tokens only; docs/hooks.md). */
  extraClaims?: Readonly<Record<string, unknown>> | null;
}

export interface IssuedAccessToken {
  token: string;
  claims: AccessTokenClaims;
  expiresIn: number;
}

export async function issueAccessToken(
  tx: Queryable,
  settings: IssuerSettings,
  signer: Signer,
  r: AccessTokenRequest,
  now: Date,
): Promise<IssuedAccessToken> {
  let lifetime = accessTokenLifetimeSeconds(
    r.target.resource.accessTokenTtlSeconds,
    settings.maxAccessTokenTtlMs,
  );
  if (r.notAfterSeconds !== undefined) {
    lifetime = Math.min(lifetime, r.notAfterSeconds - Math.floor(now.getTime() / 1000));
  }
  const input: AccessTokenInput = {
    issuer: issuerOf(settings.publicOrigin, r.realm.name),
    subject: r.subject,
    audience: r.target.resource.audience,
    clientId: r.clientId,
    scopes: r.scopes,
    lifetimeSeconds: lifetime,
    authTime: r.authentication?.authTime ?? null,
    acr: r.authentication?.acr ?? null,
    amr: r.authentication?.amr ?? null,
    sessionId: r.authentication?.sessionId ?? null,
    orgId: r.orgId ?? null,
    act: r.act ?? null,
    grantClientId: r.grantClientId ?? null,
    supportGrantId: r.supportGrantId ?? null,
    cnf: r.cnf ?? null,
    extraClaims: r.extraClaims ?? null,
  };
  if (settings.confirmation && !input.cnf) input.cnf = settings.confirmation;
  if (r.target.resource.tokenFormat === 'jwt') {
    if (r.extraAudiences?.length) input.extraAudiences = r.extraAudiences;
    const signed = await signing(() => signAccessToken(input, signer, now));
    return { token: signed.token, claims: signed.claims, expiresIn: lifetime };
  }
  const opaque = issueOpaqueAccessToken(input, now);
  const userId = r.authentication ? r.subject : null;
  await tx.query(
    `insert into opaque_access_tokens (realm_id, token_digest, jti, resource_id, client_id, user_id, session_id,
       claims, expires_at, created_at, org_id)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      r.realm.id,
      opaque.digest,
      opaque.claims.jti,
      r.target.resource.id,
      r.clientId,
      userId,
      opaque.claims.sid ?? null,
      JSON.stringify(opaque.claims),
      new Date(opaque.claims.exp * 1000),
      now,
      opaque.claims.org_id ?? null,
    ],
  );
  return { token: opaque.token, claims: opaque.claims, expiresIn: lifetime };
}

export interface IdTokenRequest {
  realm: RealmRef;
  clientId: string;
  userId: string;
  authentication: Authentication;
  nonce: string | null;
  orgId?: string | null;
  accessToken: string;
  /** The granted scopes' claims about the user; absent for a minimal ID token. */
  scopeClaims?: Record<string, unknown>;
}

export async function issueIdToken(
  settings: IssuerSettings,
  signer: Signer,
  r: IdTokenRequest,
  now: Date,
): Promise<string> {
  const signed = await signing(() =>
    signIdToken(
      {
        issuer: issuerOf(settings.publicOrigin, r.realm.name),
        subject: r.userId,
        clientId: r.clientId,
        authTime: r.authentication.authTime,
        ttlMs: settings.idTokenTtlMs,
        nonce: r.nonce,
        acr: r.authentication.acr,
        amr: r.authentication.amr,
        sessionId: r.authentication.sessionId,
        orgId: r.orgId ?? null,
        accessToken: r.accessToken,
        ...(r.scopeClaims ? { scopeClaims: r.scopeClaims } : {}),
      },
      signer,
      now,
    ),
  );
  return signed.token;
}
