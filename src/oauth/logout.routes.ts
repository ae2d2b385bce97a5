// GET and POST /realms/{realm}/oauth/logout (OpenID Connect RP-Initiated Logout 1.0; decision
// D9): ends the browser's session (pa_sid, spec doc 1, Authentication 3) and the session an
// id_token_hint names, with the refresh families bound to them, then returns to the client's
// registered post-logout URI or answers JSON. Every parameter is checked before anything ends, so
// a refused request changes nothing and never redirects (a browser gets an error page, D25).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { compactVerify, createLocalJWKSet, errors } from 'jose';
import type { ApiDeps } from '../api/api.deps.ts';
import { useBrowserErrorPages } from '../api/error-page.ts';
import { useFormBodies } from '../api/oauth-endpoint.ts';
import { findClientRecord } from '../clients/index.ts';
import { issuerOf } from '../kernel/audiences.ts';
import { digestToken } from '../kernel/digest.ts';
import { SIGNING_ALGORITHMS } from '../keys/jws.ts';
import type { Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import type { RealmRow } from '../realms/index.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import { samlLogoutUrls } from '../saml-idp/saml-logout.service.ts';
import { sendLogoutPage } from '../saml-idp/saml-logout-page.ts';
import { findLiveSessionByCookie, lockLiveSession, type SessionRow } from '../sessions/index.ts';
import { withParams } from '../signin/authorization-response.ts';
import { SESSION_COOKIE, sessionCookie } from '../signin/cookies.ts';
import { endLoggedOutSession } from './logout-session.ts';
import { ID_TOKEN_TYP } from './tokens/id-token.ts';

const PARAMS = ['id_token_hint', 'client_id', 'post_logout_redirect_uri', 'state', 'ui_locales'] as const;
type Params = Partial<Record<(typeof PARAMS)[number], string>>;
const MAX_STATE_BYTES = 2048; // as the authorization request's state

/** What a verified id_token_hint tells: who, for which client, and in which session. */
interface IdTokenHint {
  sub: string;
  aud: string;
  sid: string | null;
}

const invalid = (detail: string) => problem.invalidRequest(detail);

/** GET query or POST form: each parameter at most once; empty counts as absent. */
function readParams(req: FastifyRequest): Params {
  const source: Record<string, unknown> =
    req.method === 'POST'
      ? req.body instanceof URLSearchParams
        ? Object.fromEntries(
            [...new Set(req.body.keys())].map((k) => [k, (req.body as URLSearchParams).getAll(k)]),
          )
        : {}
      : ((req.query as Record<string, unknown>) ?? {});
  const out: Params = {};
  for (const name of PARAMS) {
    const raw = source[name];
    const values = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
    if (values.length > 1) throw invalid(`parameter ${name} is repeated`);
    const v = values[0];
    if (typeof v === 'string' && v !== '') out[name] = v;
  }
  return out;
}

/**
 * The hint must be an ID token this realm signed with a key it still publishes, for this issuer;
 * it may have expired (RP-Initiated Logout section 2). An access token (typ at+jwt) is no hint.
 */
async function verifyIdTokenHint(ctx: ApiDeps, realm: RealmRow, token: string): Promise<IdTokenHint | null> {
  if (Buffer.byteLength(token) > ctx.config.limits.maxTokenBytes) return null;
  const keySet = await ctx.keyStore.publishedKeySet(realm.name);
  if (!keySet) return null;
  let verified: Awaited<ReturnType<typeof compactVerify>>;
  try {
    verified = await compactVerify(token, createLocalJWKSet(keySet), { algorithms: [...SIGNING_ALGORITHMS] });
  } catch (e) {
    if (e instanceof errors.JOSEError || e instanceof TypeError) return null;
    throw e;
  }
  if (verified.protectedHeader.typ !== ID_TOKEN_TYP || typeof verified.protectedHeader.kid !== 'string')
    return null;
  let claims: Record<string, unknown>;
  try {
    claims = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(verified.payload));
  } catch {
    return null;
  }
  const aud = Array.isArray(claims.aud) && claims.aud.length === 1 ? claims.aud[0] : claims.aud;
  if (claims.iss !== issuerOf(ctx.config.server.publicOrigin, realm.name)) return null;
  if (typeof aud !== 'string' || aud === '' || typeof claims.sub !== 'string' || claims.sub === '')
    return null;
  const sid = typeof claims.sid === 'string' && claims.sid !== '' ? claims.sid : null;
  return { sub: claims.sub, aud, sid };
}

/** Validates everything; returns the hint and the redirect target (null: answer JSON). */
async function checkRequest(ctx: ApiDeps, realm: RealmRow, p: Params) {
  if (p.state !== undefined && Buffer.byteLength(p.state) > MAX_STATE_BYTES)
    throw invalid('state is too long');
  const hint = p.id_token_hint === undefined ? null : await verifyIdTokenHint(ctx, realm, p.id_token_hint);
  if (p.id_token_hint !== undefined && !hint) throw invalid('id_token_hint is not an ID token of this realm');
  if (hint && p.client_id !== undefined && hint.aud !== p.client_id) {
    throw invalid('id_token_hint was issued to another client');
  }
  const clientId = p.client_id ?? hint?.aud ?? null;
  if (p.post_logout_redirect_uri === undefined) return { hint, redirect: null };
  if (clientId === null) throw invalid('post_logout_redirect_uri needs client_id or id_token_hint');
  const client = await findClientRecord(ctx.db, realm.id, clientId);
  // Exact string comparison with a registered URI (decision D1), never a prefix or pattern.
  const registered =
    client?.state === 'active' && client.post_logout_redirect_uris.includes(p.post_logout_redirect_uri);
  if (!registered) throw invalid('post_logout_redirect_uri is not registered for this client');
  const uri = p.post_logout_redirect_uri;
  return { hint, redirect: p.state === undefined ? uri : withParams(uri, [['state', p.state]]) };
}

/**
 * Ends the sessions in one transaction with their audit records; returns the ids of those live. A
 * logout writes no event (document 2, Events: logouts emit no event of their own).
 */
async function endSessions(
  tx: Tx,
  realm: RealmRow,
  cookie: string | undefined,
  hint: IdTokenHint | null,
  now: Date,
  correlationId: string,
): Promise<string[]> {
  const sessions = new Map<string, SessionRow>();
  const fromCookie = cookie ? await findLiveSessionByCookie(tx, realm.id, digestToken(cookie), now) : null;
  if (fromCookie) sessions.set(fromCookie.id, fromCookie);
  // The hint's session only when it is the hint subject's own.
  const fromHint = hint?.sid ? await lockLiveSession(tx, realm.id, hint.sub, hint.sid, now) : null;
  if (fromHint) sessions.set(fromHint.id, fromHint);
  const ended: string[] = [];
  const via = { via: hint ? 'id_token_hint' : 'session_cookie', ...(hint ? { client_id: hint.aud } : {}) };
  for (const s of sessions.values()) {
    const session = { id: s.id, userId: s.user_id };
    if (await endLoggedOutSession(tx, realm.id, session, via, correlationId, now)) ended.push(s.id);
  }
  return ended;
}

async function logout(ctx: ApiDeps, req: FastifyRequest<{ Params: { realm: string } }>, reply: FastifyReply) {
  const realm = await findRequestedRealm(ctx, req.params.realm);
  if (!realm) throw problem.notFound('no such realm');
  reply.header('cache-control', 'no-store');
  const { hint, redirect } = await checkRequest(ctx, realm, readParams(req));
  const cookie = req.cookies?.[SESSION_COOKIE];
  const now = ctx.clock.now();
  const ended = await ctx.db.tx((tx) => endSessions(tx, realm, cookie, hint, now, String(req.id)));
  if (cookie !== undefined) {
    // Cleared with the attributes it was set with (signin/cookies.ts), or the browser keeps it.
    reply.clearCookie(SESSION_COOKIE, sessionCookie(ctx.config.server.publicOrigin, realm.name));
  }
  // SAML service providers the ended sessions signed in to are signed out through the browser
  // (docs/saml-idp.md, Single logout): a page of front-channel requests, then the redirect.
  const browser = redirect !== null || /\btext\/html\b/.test(req.headers.accept ?? '');
  const samlFrames = browser ? await samlLogoutUrls(ctx, realm, ended) : [];
  if (samlFrames.length > 0) return sendLogoutPage(reply, samlFrames, redirect);
  if (redirect) return reply.code(303).header('location', redirect).send();
  return reply.code(200).send({ logged_out: true });
}

export function registerLogout(app: FastifyInstance, ctx: ApiDeps): void {
  app.register(async (scope) => {
    // RP-Initiated Logout section 2: POST carries the parameters form-encoded, nothing else.
    useFormBodies(scope);
    // A refused logout never redirects: a browser gets a page, an API caller the problem (D25).
    useBrowserErrorPages(scope, ctx.log, 'logout');
    const path = '/realms/:realm/oauth/logout';
    scope.get<{ Params: { realm: string } }>(path, (req, reply) => logout(ctx, req, reply));
    scope.post<{ Params: { realm: string } }>(path, (req, reply) => logout(ctx, req, reply));
  });
}
