// What every SCIM request goes through before its handler (docs/scim.md): the realm, the
// connector's bearer credential and its budget of 1200 requests a minute (spec doc 2, Limits:
// SCIM; 429 with Retry-After beyond), and SCIM-shaped answers.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { adminAudience } from '../kernel/audiences.ts';
import { spendBudgets } from '../platform/abuse-budget.ts';
import { bearerToken } from '../platform/http/bearer.ts';
import type { RealmRow } from '../realms/index.ts';
import { findRequestedRealm } from '../realms/realm-cache.ts';
import type { ScimConnectorRow } from './scim-connectors.repo.ts';
import { connectorOfToken } from './scim-connectors.service.ts';
import { parseScimToken } from './scim-credential.ts';
import { MAX_SCIM_BODY_BYTES } from './scim-discovery.ts';
import { SCIM_CONTENT_TYPE, ScimError } from './scim-error.ts';
import { LIST_SCHEMA } from './scim-schemas.ts';
import type { ScimCall } from './scim-users.service.ts';

export const SCIM_REQUESTS_PER_MINUTE = 1200;

export interface ScimRequest {
  realm: RealmRow;
  connector: ScimConnectorRow;
  call: ScimCall;
  /** The absolute base of this realm's SCIM endpoints, for meta.location. */
  base: string;
}

const unauthorized = () =>
  new ScimError(401, null, 'a valid SCIM connector bearer token is required', {
    'www-authenticate': 'Bearer realm="scim"',
  });

export async function scimRequest(ctx: ApiDeps, req: FastifyRequest): Promise<ScimRequest> {
  const now = ctx.clock.now();
  const realm = await findRequestedRealm(ctx, (req.params as { realm: string }).realm);
  if (!realm) throw new ScimError(404, null, 'no such realm');
  const parsed = parseScimToken(
    bearerToken(req.headers.authorization, ctx.config.limits.maxTokenBytes) ?? '',
  );
  if (!parsed) throw unauthorized();
  const verdict = await spendBudgets(
    ctx.db,
    [{ bucket: `scim:${realm.id}:${parsed.id}`, limit: SCIM_REQUESTS_PER_MINUTE, windowMs: 60_000 }],
    now,
  );
  if (!verdict.ok)
    throw new ScimError(
      429,
      null,
      `rate_limited: a connector makes at most ${SCIM_REQUESTS_PER_MINUTE} requests a minute`,
      {
        'retry-after': String(verdict.retryAfterSeconds),
      },
    );
  const connector = await connectorOfToken(ctx.db, realm.id, parsed);
  if (!connector) throw unauthorized();
  return {
    realm,
    connector,
    base: `${adminAudience(ctx.config.server.publicOrigin, realm.name)}/scim/v2`,
    call: {
      realmId: realm.id,
      actor: { type: 'scim_connector', id: connector.id },
      correlationId: String(req.id),
      now,
      connectorId: connector.id,
      organizationId: connector.organization_id,
    },
  };
}

/** RFC 7644 §3.4.2.5: `attributes` keeps only the named ones (and id, schemas, meta); `excludedAttributes` drops them. */
export function project(
  resource: Record<string, unknown>,
  query: Record<string, unknown>,
): Record<string, unknown> {
  const names = (raw: unknown) =>
    typeof raw === 'string' && raw !== ''
      ? raw.split(',').map((n) => n.trim().split('.')[0]?.toLowerCase() ?? '')
      : null;
  const only = names(query.attributes);
  const except = names(query.excludedAttributes);
  if (!only && !except) return resource;
  const always = new Set(['id', 'schemas', 'meta']);
  return Object.fromEntries(
    Object.entries(resource).filter(([k]) => {
      const key = k.toLowerCase();
      if (always.has(key)) return true;
      if (only) return only.includes(key) || (k.startsWith('urn:') && only.some((n) => n.startsWith('urn:')));
      return !(except ?? []).includes(key);
    }),
  );
}

export function sendScim(reply: FastifyReply, status: number, body: unknown, etag?: string): FastifyReply {
  if (etag) reply.header('etag', etag);
  return reply.code(status).header('content-type', SCIM_CONTENT_TYPE).send(body);
}

export type ScimHandler = (
  s: ScimRequest,
  req: FastifyRequest<{ Params: Record<string, string>; Querystring: Record<string, unknown> }>,
  reply: FastifyReply,
) => Promise<unknown>;

/** One SCIM route: authenticated as a connector, counted by resource type, method and outcome. */
export function scimRoute(
  scope: FastifyInstance,
  ctx: ApiDeps,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  resource: string,
  handler: ScimHandler,
): void {
  scope.route({
    method,
    url,
    bodyLimit: MAX_SCIM_BODY_BYTES,
    config: { scimResource: resource },
    handler: async (req, reply) => {
      const typed = req as FastifyRequest<{
        Params: Record<string, string>;
        Querystring: Record<string, unknown>;
      }>;
      return handler(await scimRequest(ctx, req), typed, reply);
    },
  });
}

export const listResponse = (total: number, startIndex: number, resources: unknown[]) => ({
  schemas: [LIST_SCHEMA],
  totalResults: total,
  startIndex,
  itemsPerPage: resources.length,
  Resources: resources,
});
