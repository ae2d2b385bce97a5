// Cross-origin access for browser applications (SPA clients): the public documents (discovery,
// key set) are readable from any origin; the endpoints a browser client calls itself (token,
// UserInfo, revocation, logout) answer only origins listed in an active client's
// allowed_origins (spec doc 1, value format Origin). Introspection is for resource servers and
// gets no CORS headers.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isClientOrigin } from '../clients/index.ts';
import { hasNul } from '../kernel/text.ts';
import type { ApiDeps } from './api.deps.ts';

const PUBLIC_DOCUMENT =
  /^\/(?:realms\/[^/?]+\/(?:jwks|\.well-known\/[a-z-]+)|\.well-known\/oauth-authorization-server\/realms\/[^/?]+)(?:\?|$)/;
const BROWSER_ENDPOINT = /^\/realms\/([^/?]+)\/oauth\/(?:token|userinfo|revoke|logout)(?:\?|$)/;
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** The origin a browser sent, when it is one origin and not the string "null". */
export function originOf(req: FastifyRequest): string | null {
  const o = req.headers.origin;
  return typeof o === 'string' && o !== 'null' && !hasNul(o) ? o : null;
}

/** The realm name the first group of `pattern` captures from the URL, or null (a malformed escape names none). */
export function realmNameIn(url: string, pattern: RegExp): string | null {
  const m = pattern.exec(url);
  if (!m?.[1]) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return null;
  }
}

/** The value for Access-Control-Allow-Origin, or null when this origin gets no CORS access. */
async function allowedOrigin(ctx: ApiDeps, req: FastifyRequest): Promise<string | null> {
  const origin = originOf(req);
  if (origin === null) return null;
  if (PUBLIC_DOCUMENT.test(req.url)) return '*';
  const name = realmNameIn(req.url, BROWSER_ENDPOINT);
  if (name === null) return null;
  const realm = await ctx.realms.byName(name);
  if (realm?.state !== 'active') return null;
  return (await isClientOrigin(ctx.db, realm.id, origin)) ? origin : null;
}

function allow(reply: FastifyReply, origin: string): void {
  reply.header('access-control-allow-origin', origin);
  if (origin !== '*') reply.header('vary', 'Origin');
  reply.header('access-control-expose-headers', 'www-authenticate, dpop-nonce');
}

export function registerCors(app: FastifyInstance, ctx: ApiDeps): void {
  // Callback form: most requests carry no Origin and leave without a promise or a microtask turn.
  app.addHook('onRequest', (req, reply, done) => {
    if (req.method === 'OPTIONS' || originOf(req) === null) return done();
    if (!PUBLIC_DOCUMENT.test(req.url) && !BROWSER_ENDPOINT.test(req.url)) return done();
    allowedOrigin(ctx, req).then((origin) => {
      if (origin) allow(reply, origin);
      done();
    }, done);
  });
  // Preflight: a refused origin gets an answer without CORS headers, which the browser enforces.
  const preflight = async (req: FastifyRequest, reply: FastifyReply) => {
    const origin = await allowedOrigin(ctx, req);
    if (origin) {
      allow(reply, origin);
      reply
        .header('access-control-allow-methods', 'GET, POST')
        .header('access-control-allow-headers', 'authorization, content-type, dpop')
        .header('access-control-max-age', String(PREFLIGHT_MAX_AGE_SECONDS));
    }
    return reply.code(204).send();
  };
  for (const path of [
    '/realms/:realm/oauth/:endpoint',
    '/realms/:realm/jwks',
    '/realms/:realm/.well-known/:document',
    '/.well-known/oauth-authorization-server/realms/:realm',
  ]) {
    app.options(path, preflight);
  }
}
