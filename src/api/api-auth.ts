// Bearer authentication of the service's own APIs (spec doc 1, Authentication 4 and 7): the
// administration API takes an admin-audience token from an MFA session (or a service principal's
// token) and checks named permissions; /me takes an account-audience token. Every request runs
// the live checks of doc 2, Revocation exposure, so a revocation counts from its commit.
import type { FastifyRequest } from 'fastify';
import { checkLiveness, factsOfToken, type Liveness, type TokenFacts } from '../access/token-liveness.ts';
import type { AccessTokenRejection, VerifiedAccessToken } from '../access/verify-access-token.ts';
import {
  accountAudience,
  adminAudience,
  BUILTIN_ACCOUNT,
  BUILTIN_ADMIN,
  issuerOf,
} from '../kernel/audiences.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import type { RealmRow } from '../realms/index.ts';
import { permissionsOf, type RoleHolding } from '../roles/effective-roles.ts';
import type { ApiDeps } from './api.deps.ts';
import {
  checkResourceProof,
  dpopChallenge,
  type PresentedAuthorization,
  presentedAuthorization,
} from './dpop-auth.ts';

export type ApiAudience = 'admin' | 'account';

export interface ApiCaller {
  kind: 'user' | 'service_principal';
  /** User id or service principal id (the token's sub). */
  id: string;
  clientId: string;
  sessionId: string | null;
  /** Seconds since the epoch, when the token says. */
  authTime: number | null;
  sessionMfa: boolean;
  recoveryRestricted: boolean;
  /**
   * Permissions held at realm scope, plus those held inside the route's organization when the
   * route names one (organizationParam); conditional assignments count when the session meets them.
   */
  permissions: ReadonlySet<string>;
  /** The holdings behind `permissions` (admin audience only). */
  roles: readonly RoleHolding[];
  /** The access token; null when the caller presented an API key (api-key-auth.ts). */
  token: VerifiedAccessToken | null;
  /** The audience the token was accepted for (see ApiAuthOptions.accountTokensToo). */
  audience: ApiAudience;
}

export interface ApiAuthOptions {
  audience: ApiAudience;
  /** Every one of these is needed (administration API). */
  permissions?: readonly string[];
  /** Authentication within security.recent_auth_window is needed. */
  recentAuth?: boolean;
  /** Authentication within this fixed window is needed (signing-key rotation: 5 minutes). */
  recentAuthWithinMs?: number;
  /**
   * Only a person's MFA session may call (spec doc 2 names one for signing-key rotation): a
   * service principal, which has no session, is refused with mfa_required.
   */
  sessionRequired?: boolean;
  /**
   * The route parameter holding an organization id: permissions held inside that organization
   * count too (org.* permissions of organization administrators).
   */
  organizationParam?: string;
  /**
   * A write a recovery-restricted session may still make (doc 1, Errors, case rule 1): factor
   * enrollment, ending sessions, forgetting remembered devices. Every other write refuses it.
   */
  allowedWhileRestricted?: boolean;
  /**
   * An administration route that also takes an account token, which then holds no permissions
   * (the jobs API: doc 2 sends the personal export's requester there too). The handler narrows
   * what such a caller sees by `caller.audience`.
   */
  accountTokensToo?: boolean;
}

const challenge = (error: 'invalid_token' | 'invalid_request', description?: string) => ({
  'www-authenticate': `Bearer error="${error}"${description ? `, error_description="${description}"` : ''}`,
});

export const invalidToken = (detail = 'the access token is missing, invalid or no longer active') =>
  problem.unauthorized(detail, challenge('invalid_token'));

function presentedToken(app: ApiDeps, req: FastifyRequest): PresentedAuthorization {
  // The token travels in the Authorization header only (doc 1, Authentication 7).
  const query = req.query as Record<string, unknown> | undefined;
  if (query && 'access_token' in query) {
    throw new Problem(
      400,
      'invalid_request',
      'send the access token in the Authorization header, not the query',
      undefined,
      challenge('invalid_request'),
    );
  }
  const header = req.headers.authorization;
  if (header === undefined)
    throw problem.unauthorized('an access token is required', { 'www-authenticate': 'Bearer' });
  const presented = presentedAuthorization(header, app.config.limits.maxTokenBytes);
  if (!presented) throw invalidToken();
  return presented;
}

const dpopRefusal = (
  app: ApiDeps,
  realmId: string,
  error: Parameters<typeof dpopChallenge>[2],
  description?: string,
) =>
  problem.unauthorized(
    description ?? 'the access token is missing, invalid or no longer active',
    dpopChallenge(app, realmId, error, description),
  );

/** The DPoP proof of a DPoP-scheme request, for the token's key (doc 1, Authentication 8). */
async function requireProof(
  app: ApiDeps,
  req: FastifyRequest,
  realm: RealmRow,
  token: string,
  t: VerifiedAccessToken,
): Promise<void> {
  const jkt = t.cnf && 'jkt' in t.cnf ? t.cnf.jkt : null;
  const proof = await checkResourceProof(app, req, realm.id, token, jkt);
  if (!proof.ok) throw dpopRefusal(app, realm.id, proof.error, proof.description);
}

/** A token verified offline and live, or why not (an offline rejection, or inactive). */
export type OwnToken =
  | { ok: true; token: VerifiedAccessToken; live: Liveness }
  | { ok: false; reason: AccessTokenRejection | 'inactive' };

/**
 * One of this service's own access tokens for one of its own audiences, verified offline and
 * then live.
 */
export async function verifyOwnToken(
  app: ApiDeps,
  realm: RealmRow,
  token: string,
  target: {
    audience: string;
    resourceId: string;
    withRoles?: boolean;
    rolesOrgId?: string | null;
    now: Date;
    /** The DPoP scheme: the caller checks the proof against the returned token's cnf. */
    senderConstrained?: boolean;
    /** The request's client certificate thumbprint, for certificate-bound tokens (RFC 8705). */
    certificateThumbprint?: string | null;
  },
): Promise<OwnToken> {
  const verified = await app.tokenVerifier.verify(token, {
    realmName: realm.name,
    issuer: issuerOf(app.config.server.publicOrigin, realm.name),
    audience: target.audience,
    senderConstrained: target.senderConstrained === true,
    certificateThumbprint: target.certificateThumbprint ?? null,
  });
  if (!verified.ok) return { ok: false, reason: verified.reason };
  const t = verified.token;
  const live = await checkLiveness(
    app.db,
    {
      ...factsOfToken(realm.id, t, target.audience, target.resourceId),
      withRoles: target.withRoles ?? false,
      rolesOrgId: target.rolesOrgId ?? null,
    },
    target.now,
  );
  return live.active ? { ok: true, token: t, live } : { ok: false, reason: 'inactive' };
}

export function organizationOf(req: FastifyRequest, opts: ApiAuthOptions): string | null {
  if (!opts.organizationParam) return null;
  const value = (req.params as Record<string, unknown>)[opts.organizationParam];
  return typeof value === 'string' && value.length > 0 ? value : null;
}

/** A caller whose token verified offline; its live check is still to run. */
export interface PendingCaller {
  token: VerifiedAccessToken;
  audience: ApiAudience;
  facts: TokenFacts;
  now: Date;
  /** Anything but GET and HEAD. */
  write: boolean;
  /** The token came under the DPoP scheme: refusals carry a DPoP challenge. */
  dpop: boolean;
}

/**
 * The offline half of authenticating an API request: the token verified for the route's
 * audience, and the live-check facts to run (alone, or folded into a caller's own statement).
 */
export async function verifyApiCaller(
  app: ApiDeps,
  req: FastifyRequest,
  realm: RealmRow,
  opts: ApiAuthOptions,
): Promise<PendingCaller> {
  const { token, scheme } = presentedToken(app, req);
  const origin = app.config.server.publicOrigin;
  const verifyFor = async (kind: ApiAudience) => {
    const audience =
      kind === 'admin' ? adminAudience(origin, realm.name) : accountAudience(origin, realm.name);
    const verified = await app.tokenVerifier.verify(token, {
      realmName: realm.name,
      issuer: issuerOf(origin, realm.name),
      audience,
      senderConstrained: scheme === 'dpop',
      certificateThumbprint: req.clientCertificate?.thumbprint ?? null,
    });
    return { kind, audience, verified };
  };
  let v = await verifyFor(opts.audience);
  if (!v.verified.ok && opts.audience === 'admin' && opts.accountTokensToo) v = await verifyFor('account');
  if (!v.verified.ok) throw scheme === 'dpop' ? dpopRefusal(app, realm.id, 'invalid_token') : invalidToken();
  const t = v.verified.token;
  if (scheme === 'dpop') await requireProof(app, req, realm, token, t);
  return {
    token: t,
    audience: v.kind,
    now: app.clock.now(),
    write: req.method !== 'GET' && req.method !== 'HEAD',
    dpop: scheme === 'dpop',
    facts: {
      ...factsOfToken(realm.id, t, v.audience, v.kind === 'admin' ? BUILTIN_ADMIN : BUILTIN_ACCOUNT),
      withRoles: v.kind === 'admin',
      rolesOrgId: organizationOf(req, opts),
    },
  };
}

/** The live half: the caller the request acts for, or the problem it must see. */
export function authorizeApiCaller(
  app: ApiDeps,
  pending: PendingCaller,
  live: Liveness,
  opts: ApiAuthOptions,
): ApiCaller {
  const { token: t, now } = pending;
  if (!live.active || live.subjectType === null)
    throw pending.dpop ? dpopRefusal(app, pending.facts.realmId, 'invalid_token') : invalidToken();
  const caller: ApiCaller = {
    kind: live.subjectType,
    id: t.subject,
    clientId: t.clientId,
    sessionId: t.sessionId,
    authTime: t.authTime,
    sessionMfa: live.sessionMfa,
    recoveryRestricted: live.sessionRecoveryRestricted || live.userState === 'recovery_restricted',
    permissions: permissionsOf(live.roles, {
      mfa: live.subjectType === 'service_principal' || live.sessionMfa,
      authAgeSeconds: t.authTime === null ? null : Math.max(0, Math.floor(now.getTime() / 1000) - t.authTime),
    }),
    roles: live.roles,
    token: t,
    audience: pending.audience,
  };
  enforceRecoveryRestriction(caller, opts, pending.write);
  if (pending.audience === 'admin') authorizeAdmin(app, caller, opts, now);
  // The account API asks for a recent sign-in on its sensitive routes too (/me/deletion, /me/exports).
  else if (opts.recentAuth) requireRecentAuth(app, caller, now);
  return caller;
}

/**
 * doc 1, Errors, case rule 1: a recovery-restricted caller writes only where the route allows it,
 * reads anything outside administration, and reads no administration at all.
 */
function enforceRecoveryRestriction(caller: ApiCaller, opts: ApiAuthOptions, write: boolean): void {
  if (!caller.recoveryRestricted) return;
  if (write && !opts.allowedWhileRestricted) {
    throw new Problem(
      403,
      'recovery_restricted',
      'this session signed in with a recovery code; sign in with a second factor to make changes',
    );
  }
  if (caller.audience === 'admin') throw adminNeedsMfa();
}

const adminNeedsMfa = () =>
  new Problem(403, 'mfa_required', 'administration needs a session that completed MFA');

export function authorizeAdmin(app: ApiDeps, caller: ApiCaller, opts: ApiAuthOptions, now: Date): void {
  if (caller.kind === 'user') {
    // doc 1 Errors: administration needs an MFA session (a recovery-restricted one was refused above).
    if (!caller.sessionMfa || caller.sessionId === null) throw adminNeedsMfa();
  } else if (opts.sessionRequired) {
    throw adminNeedsMfa();
  }
  for (const p of opts.permissions ?? []) {
    if (caller.permissions.has(p)) continue;
    // doc 1 Errors: another tenant's object is 404, so a caller with no standing in the
    // organization cannot learn that it exists.
    if (opts.organizationParam && !hasStandingIn(caller)) throw problem.notFound('no such organization');
    throw problem.forbidden(`permission ${p} is missing`);
  }
  if (opts.recentAuthWithinMs !== undefined) requireRecentAuth(app, caller, now, opts.recentAuthWithinMs);
  else if (opts.recentAuth) requireRecentAuth(app, caller, now);
}

const hasStandingIn = (caller: ApiCaller): boolean =>
  caller.permissions.has('org.read') || caller.roles.some((r) => r.scope_type === 'organization');

/** decision D13: too old an authentication answers step_up_required with the obligation. */
export function requireRecentAuth(
  app: ApiDeps,
  caller: ApiCaller,
  now: Date,
  windowMs = app.config.security.recentAuthWindowMs,
): void {
  if (caller.kind === 'service_principal') return;
  const authTimeMs = caller.authTime === null ? null : caller.authTime * 1000;
  if (authTimeMs !== null && now.getTime() - authTimeMs <= windowMs) return;
  throw new Problem(403, 'step_up_required', 'this operation needs a recent sign-in', {
    obligation: {
      type: 'reauthenticate',
      required_profile: 'recent',
      max_age_seconds: Math.floor(windowMs / 1000),
    },
  });
}
