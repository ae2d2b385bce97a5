// The shared shape of the form-posting protocol endpoints (token, introspection, revocation):
// an application/x-www-form-urlencoded body, answers that are never cached, RFC 6749 section 5.2
// error bodies, and client authentication (src/clients/client-auth.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  type AuthenticatedClient,
  authenticateClient,
  type ClientAuthOptions,
} from '../clients/client-auth.ts';
import type { ClientAuthFacts, ClientAuthRow } from '../clients/index.ts';
import { issuerOf } from '../kernel/audiences.ts';
import { OAuthError, oauthError, oauthErrorBody } from '../kernel/oauth-error.ts';
import { hasNul } from '../kernel/text.ts';
import { networkOf } from '../platform/http/client-address.ts';
import { checkCharset } from '../platform/http/json-body.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import {
  DATABASE_RETRY_AFTER_SECONDS,
  dependencyOutage,
  logOutage,
} from '../platform/http/problem-mapper.ts';
import type { RealmRow } from '../realms/index.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import type { ApiDeps } from './api.deps.ts';
import { type FailureSubject, failureBudgetsOf } from './failure-budgets.ts';

const FORM = 'application/x-www-form-urlencoded';

export interface OAuthCall {
  req: FastifyRequest;
  reply: FastifyReply;
  realm: RealmRow;
  form: URLSearchParams;
}

export interface OAuthEndpointOptions {
  /** Also serve suspended realms (introspection: spec doc 2, Revocation exposure). */
  suspendedRealms?: boolean;
}

/** The scope reads application/x-www-form-urlencoded bodies (as URLSearchParams) and nothing else. */
export function useFormBodies(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser(FORM, { parseAs: 'string' }, (req, body, done) => {
    try {
      checkCharset(req.headers['content-type']);
      done(null, new URLSearchParams(body as string));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
}

/**
 * A database outage on a protocol endpoint, in the endpoint's own error form: OAuth clients read
 * `error`, not a problem document (RFC 6749 section 5.2 lists temporarily_unavailable for this).
 */
function asOAuthOutage(err: unknown, ctx: ApiDeps, requestId: string): OAuthError | null {
  const outage = dependencyOutage(err);
  if (!outage) return null;
  logOutage(ctx.log, err, requestId);
  return oauthError.temporarilyUnavailable(outage.detail, DATABASE_RETRY_AFTER_SECONDS);
}

/** The scope renders OAuthError as RFC 6749 JSON; other errors go on to the problem mapper. */
export function useOAuthErrors(scope: FastifyInstance, ctx: ApiDeps): void {
  scope.setErrorHandler((thrown, req, reply) => {
    const err = thrown instanceof OAuthError ? thrown : asOAuthOutage(thrown, ctx, String(req.id));
    if (!err) throw thrown;
    if (err.debug) ctx.log.info({ oauth_error: err.error, reason: err.debug }, 'oauth request refused');
    reply.code(err.status).headers({ 'cache-control': 'no-store', ...err.headers });
    return reply.send(oauthErrorBody(err));
  });
}

const findAnyRealm = async (ctx: ApiDeps, name: string): Promise<RealmRow | null> =>
  hasNul(name) ? null : ctx.realms.byName(name);

/**
 * Registers POST /realms/:realm/oauth/<name> in a scope of its own that reads form bodies only
 * and renders OAuthError as RFC 6749 JSON; other failures keep their problem documents.
 */
export function oauthEndpoint(
  app: FastifyInstance,
  ctx: ApiDeps,
  name: string,
  handler: (call: OAuthCall) => Promise<unknown>,
  opts: OAuthEndpointOptions = {},
): void {
  app.register(async (scope) => {
    useFormBodies(scope);
    useOAuthErrors(scope, ctx);
    scope.post<{ Params: { realm: string } }>(`/realms/:realm/oauth/${name}`, async (req, reply) => {
      const realm = opts.suspendedRealms
        ? await findAnyRealm(ctx, req.params.realm)
        : await findRequestedRealm(ctx, req.params.realm);
      if (!realm) throw problem.notFound('no such realm');
      if (!(req.body instanceof URLSearchParams)) {
        throw new Problem(415, 'invalid_request', `the body must be ${FORM}`);
      }
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      return handler({ req, reply, realm, form: req.body });
    });
  });
}

/** Whose failure budgets a protocol request spends: its realm, client_id (once read) and network. */
export function failureSubjectOf(call: OAuthCall): FailureSubject {
  let network: string | null | undefined;
  return {
    realmId: call.realm.id,
    clientId: null,
    // Worked out only when a budget is looked at: a request of a process that knows no spent
    // budget and meets no failure never needs it.
    get network() {
      if (network === undefined) network = networkOf(call.req.clientAddress);
      return network;
    },
  };
}

/**
 * Authenticates the calling client of a protocol endpoint (throws invalid_client/invalid_request).
 * The failure budgets of client authentication (api/failure-budgets.ts) are checked before any
 * credential and spent by a failure; `subject` learns the presented client_id.
 */
export async function authenticateOAuthClient<C extends ClientAuthFacts = ClientAuthRow>(
  ctx: ApiDeps,
  call: OAuthCall,
  endpoint: string,
  now: Date,
  loadClient?: ClientAuthOptions<C>['loadClient'],
  subject: FailureSubject = failureSubjectOf(call),
): Promise<AuthenticatedClient<C>> {
  const keyring = ctx.keyring;
  if (!keyring) throw oauthError.temporarilyUnavailable('no root key is configured');
  const issuer = issuerOf(ctx.config.server.publicOrigin, call.realm.name);
  const auth = call.req.headers.authorization;
  const budgets = failureBudgetsOf(ctx);
  budgets.check(endpoint, subject, now);
  try {
    return await authenticateClient<C>(
      ctx.db,
      keyring,
      call.realm.id,
      {
        authorization: typeof auth === 'string' ? auth : undefined,
        form: call.form,
        certificate: call.req.clientCertificate?.x509 ?? null,
      },
      {
        now,
        maxTokenBytes: ctx.config.limits.maxTokenBytes,
        challengeRealm: call.realm.name,
        assertionAudiences: [issuer, `${issuer}/oauth/${endpoint}`],
        clockSkewSeconds: Math.floor(ctx.config.tokens.clockSkewMs / 1000),
        ...(loadClient ? { loadClient } : {}),
        beforeVerify: (clientId) => {
          subject.clientId = clientId;
          budgets.check(endpoint, subject, now);
        },
      },
    );
  } catch (e) {
    return budgets.counted(ctx.db, endpoint, subject, e, now);
  }
}
