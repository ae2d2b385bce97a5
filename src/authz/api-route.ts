// Registers an administration or account API route with its authentication as an option
// (ARCHITECTURE.md, Request path): the handler receives the realm and the authorized caller.
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { AppContext } from '../main/context.ts';
import { problem } from '../platform/http/problem.ts';
import type { RealmRow } from '../realms/realm.repo.ts';
import { findRequestedRealm } from '../signin/advance.ts';
import { type ApiAuthOptions, type ApiCaller, authenticateApiCall } from './api-auth.ts';

export interface ApiCall<P> {
  req: FastifyRequest<{ Params: P & { realm: string } }>;
  reply: FastifyReply;
  realm: RealmRow;
  caller: ApiCaller;
}

export function apiRoute<P extends Record<string, string> = Record<never, never>>(
  app: FastifyInstance,
  ctx: AppContext,
  method: HTTPMethods,
  /** Under /api/v1/realms/:realm */
  path: string,
  auth: ApiAuthOptions,
  handler: (call: ApiCall<P>) => Promise<unknown>,
): void {
  app.route<{ Params: P & { realm: string } }>({
    method,
    url: `/api/v1/realms/:realm${path}`,
    handler: async (req, reply) => {
      const realm = await findRequestedRealm(ctx, (req.params as { realm: string }).realm);
      if (!realm) throw problem.notFound('no such realm');
      const caller = await authenticateApiCall(ctx, req, realm, auth);
      return handler({ req, reply, realm, caller });
    },
  });
}
