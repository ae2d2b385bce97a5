// The registrar of the administration and account (/me) API families (docs/architecture.md, Request
// path; the audience option says which): it authenticates as a route option, holds the
// cross-cutting rules once (MFA session, recent authentication, permissions, recovery-restricted
// writes: api-auth.ts) and hands the handler the realm, the authorized caller and one `Call`.
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, HTTPMethods } from 'fastify';
import { checkLivenessMany, type Liveness, type TokenFacts } from '../access/token-liveness.ts';
import type { Call } from '../kernel/call.ts';
import { problem } from '../platform/http/problem.ts';
import type { RealmRow } from '../realms/index.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import type { ApiDeps } from './api.deps.ts';
import { type ApiAuthOptions, type ApiCaller, authorizeApiCaller, verifyApiCaller } from './api-auth.ts';
import { apiKeyCaller, presentsApiKey } from './api-key-auth.ts';

/** A `Call` a request started: its correlation id is the request id. */
export interface RequestCall extends Call {
  correlationId: string;
}

export interface ApiCall<P> {
  req: FastifyRequest<{ Params: P & { realm: string } }>;
  reply: FastifyReply;
  realm: RealmRow;
  caller: ApiCaller;
  /** Built once per request: this realm, the caller as actor, the request id, the clock reading. */
  call: RequestCall;
}

function callOf(req: FastifyRequest, realm: RealmRow, caller: ApiCaller, now: Date): RequestCall {
  return {
    realmId: realm.id,
    actor: { type: caller.kind, id: caller.id },
    correlationId: String(req.id),
    now,
  };
}

async function routeRealm(ctx: ApiDeps, req: FastifyRequest): Promise<RealmRow> {
  const realm = await findRequestedRealm(ctx, (req.params as { realm: string }).realm);
  if (!realm) throw problem.notFound('no such realm');
  return realm;
}

export function apiRoute<P extends Record<string, string> = Record<never, never>>(
  app: FastifyInstance,
  ctx: ApiDeps,
  method: HTTPMethods,
  /** Under /api/v1/realms/:realm */
  path: string,
  auth: ApiAuthOptions,
  handler: (call: ApiCall<P>) => Promise<unknown>,
  /** The route's schema for Fastify's route table (route-schema.ts, declaredApiRoute). */
  schema?: FastifySchema,
): void {
  // An ordinary route is one whose statement holds the caller's live check alone.
  apiRouteSharingLiveCheck<P>(
    app,
    ctx,
    method,
    path,
    auth,
    async ({ req, reply, realm, liveChecks }) => {
      const { caller, call } = await liveChecks([]);
      return handler({ req, reply, realm, caller, call });
    },
    schema,
  );
}

export interface SharedLiveCheckCall<P> {
  req: FastifyRequest<{ Params: P & { realm: string } }>;
  reply: FastifyReply;
  realm: RealmRow;
  /**
   * Runs the caller's live check together with `others` in one statement, authorizes the caller
   * (throwing the problem it must see) and answers the others' live checks in order. The handler
   * must call it exactly once, before it answers anything.
   */
  liveChecks(
    others: readonly TokenFacts[],
  ): Promise<{ caller: ApiCaller; call: RequestCall; lives: Liveness[] }>;
}

/**
 * An API route whose handler checks other tokens live (the decision API): the caller's token is
 * verified offline up front and its live check rides in the handler's statement, so a decision
 * costs one database round trip instead of two (bench/README.md).
 */
export function apiRouteSharingLiveCheck<P extends Record<string, string> = Record<never, never>>(
  app: FastifyInstance,
  ctx: ApiDeps,
  method: HTTPMethods,
  path: string,
  auth: ApiAuthOptions,
  handler: (call: SharedLiveCheckCall<P>) => Promise<unknown>,
  schema?: FastifySchema,
): void {
  app.route<{ Params: P & { realm: string } }>({
    method,
    url: `/api/v1/realms/:realm${path}`,
    ...(schema ? { schema } : {}),
    handler: async (req, reply) => {
      const realm = await routeRealm(ctx, req);
      if (presentsApiKey(ctx, req)) {
        const now = ctx.clock.now();
        const caller = await apiKeyCaller(ctx, req, realm, auth, now);
        let done = false;
        const keyChecks = async (others: readonly TokenFacts[]) => {
          if (done) throw new Error('the caller was checked already');
          done = true;
          const lives = others.length > 0 ? await checkLivenessMany(ctx.db, others, now) : [];
          return { caller, call: callOf(req, realm, caller, now), lives };
        };
        return handler({ req, reply, realm, liveChecks: keyChecks });
      }
      const pending = await verifyApiCaller(ctx, req, realm, auth);
      let checked = false;
      const liveChecks = async (others: readonly TokenFacts[]) => {
        if (checked) throw new Error('the caller was checked already');
        checked = true;
        const [mine, ...lives] = await checkLivenessMany(ctx.db, [pending.facts, ...others], pending.now);
        const caller = authorizeApiCaller(ctx, pending, mine as Liveness, auth);
        return { caller, call: callOf(req, realm, caller, pending.now), lives };
      };
      const answer = await handler({ req, reply, realm, liveChecks });
      if (!checked) throw new Error('the handler answered without checking its caller');
      return answer;
    },
  });
}
