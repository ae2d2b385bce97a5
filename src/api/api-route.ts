// Registers an administration or account API route with its authentication as an option
// (ARCHITECTURE.md, Request path): the handler receives the realm and the authorized caller.
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import { checkLivenessMany, type Liveness, type TokenFacts } from '../access/token-liveness.ts';
import { problem } from '../platform/http/problem.ts';
import type { RealmRow } from '../realms/index.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import type { ApiDeps } from './api.deps.ts';
import { type ApiAuthOptions, type ApiCaller, authorizeApiCaller, verifyApiCaller } from './api-auth.ts';

export interface ApiCall<P> {
  req: FastifyRequest<{ Params: P & { realm: string } }>;
  reply: FastifyReply;
  realm: RealmRow;
  caller: ApiCaller;
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
): void {
  // An ordinary route is one whose statement holds the caller's live check alone.
  apiRouteSharingLiveCheck<P>(app, ctx, method, path, auth, async ({ req, reply, realm, liveChecks }) => {
    const { caller } = await liveChecks([]);
    return handler({ req, reply, realm, caller });
  });
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
  liveChecks(others: readonly TokenFacts[]): Promise<{ caller: ApiCaller; lives: Liveness[] }>;
}

/**
 * An API route whose handler checks other tokens live (the decision API): the caller's token is
 * verified offline up front and its live check rides in the handler's statement, so a decision
 * costs one database round trip instead of two (BENCH.md).
 */
export function apiRouteSharingLiveCheck<P extends Record<string, string> = Record<never, never>>(
  app: FastifyInstance,
  ctx: ApiDeps,
  method: HTTPMethods,
  path: string,
  auth: ApiAuthOptions,
  handler: (call: SharedLiveCheckCall<P>) => Promise<unknown>,
): void {
  app.route<{ Params: P & { realm: string } }>({
    method,
    url: `/api/v1/realms/:realm${path}`,
    handler: async (req, reply) => {
      const realm = await routeRealm(ctx, req);
      const pending = await verifyApiCaller(ctx, req, realm, auth);
      let checked = false;
      const liveChecks = async (others: readonly TokenFacts[]) => {
        if (checked) throw new Error('the caller was checked already');
        checked = true;
        const [mine, ...lives] = await checkLivenessMany(ctx.db, [pending.facts, ...others], pending.now);
        return { caller: authorizeApiCaller(ctx, pending, mine as Liveness, auth), lives };
      };
      const answer = await handler({ req, reply, realm, liveChecks });
      if (!checked) throw new Error('the handler answered without checking its caller');
      return answer;
    },
  });
}
