// API keys as bearers of the administration API (docs/api-keys.md): a key acts as its service
// principal, with the permissions that principal holds now, as a principal's own access token
// would (spec doc 1, Authentication). Each key has a per-minute budget of its own.
import type { FastifyRequest } from 'fastify';
import { spendBudgets } from '../platform/abuse-budget.ts';
import { bearerToken } from '../platform/http/bearer.ts';
import { Problem } from '../platform/http/problem.ts';
import type { RealmRow } from '../realms/index.ts';
import { standingOf } from '../roles/index.ts';
import { looksLikeApiKey, parseApiKey } from '../service-principals/api-key-secret.ts';
import { principalOfApiKey } from '../service-principals/api-keys.service.ts';
import type { ApiDeps } from './api.deps.ts';
import {
  type ApiAuthOptions,
  type ApiCaller,
  authorizeAdmin,
  invalidToken,
  organizationOf,
} from './api-auth.ts';

/** Decision (docs/decisions.md, API keys): requests a minute one key may make. */
export const API_KEY_REQUESTS_PER_MINUTE = 600;

/** The presented bearer is an API key (so the access-token path must not try it). */
export function presentsApiKey(app: ApiDeps, req: FastifyRequest): boolean {
  const token = bearerToken(req.headers.authorization, app.config.limits.maxTokenBytes);
  return token !== null && looksLikeApiKey(token);
}

/** The authorized caller an API key stands for, or the problem the request must see. */
export async function apiKeyCaller(
  app: ApiDeps,
  req: FastifyRequest,
  realm: RealmRow,
  opts: ApiAuthOptions,
  now: Date,
): Promise<ApiCaller> {
  const parsed = parseApiKey(bearerToken(req.headers.authorization, app.config.limits.maxTokenBytes) ?? '');
  // Keys serve the administration API only, and never where a person's session is required.
  if (!parsed || opts.audience !== 'admin') throw invalidToken();
  const budget = {
    bucket: `api_key:${realm.id}:${parsed.id}`,
    limit: API_KEY_REQUESTS_PER_MINUTE,
    windowMs: 60_000,
  };
  const verdict = await spendBudgets(app.db, [budget], now);
  if (!verdict.ok)
    throw new Problem(
      429,
      'rate_limited',
      'this API key made too many requests; try again later',
      undefined,
      {
        'retry-after': String(verdict.retryAfterSeconds),
      },
    );
  const principalId = await principalOfApiKey(app.db, realm.id, parsed, now);
  if (principalId === null) throw invalidToken();
  const orgId = organizationOf(req, opts);
  const standing = await standingOf(
    app.db,
    realm.id,
    { type: 'service_principal', id: principalId },
    orgId,
    now,
  );
  if (!standing.active) throw invalidToken();
  const caller: ApiCaller = {
    kind: 'service_principal',
    id: principalId,
    clientId: '',
    sessionId: null,
    authTime: null,
    sessionMfa: false,
    recoveryRestricted: false,
    permissions: standing.permissions,
    roles: [],
    token: null,
    audience: 'admin',
  };
  authorizeAdmin(app, caller, opts, now);
  return caller;
}
