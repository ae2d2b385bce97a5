// Cross-origin access to the sign-in transaction API (spec doc 1, "Endpoints: Authorization and
// sign-in transactions"; Authentication 1): a login UI on its own origin starts a transaction,
// reads its state and posts its steps with fetch(..., {credentials: 'include'}), so the pa_tx
// cookie travels. Only the origins the step binding accepts get CORS headers (the same rule,
// signin/allowed-origin.ts), always named exactly and with credentials, never `*`; any other
// origin gets none, so the browser keeps it from reading any answer.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import { isSigninOrigin } from '../signin/allowed-origin.ts';
import type { ApiDeps } from './api.deps.ts';
import { originOf, realmNameIn } from './protocol-cors.ts';

const TRANSACTION_API = /^\/api\/v1\/realms\/([^/?]+)\/auth\/transactions(?:\/[^?]*)?(?:\?|$)/;
const PREFLIGHT_MAX_AGE_SECONDS = 600;
/** The request headers the transaction API reads besides the CORS-safelisted ones. */
export const SIGNIN_REQUEST_HEADERS = ['content-type', 'x-csrf-token', 'x-transaction-token', 'x-request-id'];
/** Response headers a login UI may want to read (a 429's wait, the id to quote to support). */
const EXPOSED = 'retry-after, x-request-id';

/** The request's origin when it may call this realm's transaction API; null otherwise. */
async function allowedOrigin(ctx: ApiDeps, req: FastifyRequest): Promise<string | null> {
  const origin = originOf(req);
  if (origin === null) return null;
  const name = realmNameIn(req.url, TRANSACTION_API);
  if (name === null) return null;
  const realm = await findRequestedRealm(ctx, name);
  if (!realm) return null;
  return (await isSigninOrigin(ctx.db, ctx.config.server.publicOrigin, realm.id, origin)) ? origin : null;
}

function allow(reply: FastifyReply, origin: string): void {
  reply
    .header('access-control-allow-origin', origin)
    .header('access-control-allow-credentials', 'true')
    .header('access-control-expose-headers', EXPOSED);
}

export function registerSigninCors(app: FastifyInstance, ctx: ApiDeps): void {
  // Callback form: requests outside the transaction API leave without a promise or a microtask turn.
  app.addHook('onRequest', (req, reply, done) => {
    if (req.method === 'OPTIONS' || !TRANSACTION_API.test(req.url)) return done();
    // The answer depends on Origin whether or not this one is allowed.
    reply.header('vary', 'Origin');
    allowedOrigin(ctx, req).then((origin) => {
      if (origin) allow(reply, origin);
      done();
    }, done);
  });
  // Preflight: a refused origin gets an answer without CORS headers, which the browser enforces.
  const preflight = async (req: FastifyRequest, reply: FastifyReply) => {
    reply.header('vary', 'Origin');
    const origin = await allowedOrigin(ctx, req);
    if (origin) {
      allow(reply, origin);
      reply
        .header('access-control-allow-methods', 'GET, POST')
        .header('access-control-allow-headers', SIGNIN_REQUEST_HEADERS.join(', '))
        .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS));
    }
    return reply.code(204).send();
  };
  app.options('/api/v1/realms/:realm/auth/transactions', preflight);
  app.options('/api/v1/realms/:realm/auth/transactions/*', preflight);
}
