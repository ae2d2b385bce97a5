// Pieces every route file of this context shares: the call context and the options of routes
// bound to one organization.
import type { FastifyRequest } from 'fastify';
import type { OrgCall } from '../organizations/organizations.types.ts';
import type { Queryable } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import type { RealmRow } from '../realms/index.ts';
import { findLiveOrganization } from '../roles/index.ts';
import { idParam } from '../roles/roles.decode.ts';
import type { ApiDeps } from './api.deps.ts';
import type { ApiCaller } from './api-auth.ts';

export type OrgParams = { org: string };

export function orgCall(ctx: ApiDeps, req: FastifyRequest, realm: RealmRow, caller: ApiCaller): OrgCall {
  return {
    realmId: realm.id,
    actor: { type: caller.kind, id: caller.id },
    correlationId: String(req.id),
    now: ctx.clock.now(),
    permissions: caller.permissions,
    caller,
  };
}

/**
 * Options of a route on one organization: the permissions count when held in the realm or inside
 * the organization (its administrators), and a caller with no standing there gets 404.
 */
export const inOrg = (...permissions: string[]) =>
  ({ audience: 'admin', permissions, organizationParam: 'org' }) as const;

/** The organization of an /organizations/{org}/... path; 404 when it does not exist (any more). */
export async function liveOrgParam(q: Queryable, realmId: string, raw: string): Promise<string> {
  const orgId = idParam('org', raw, 'organization');
  if (!(await findLiveOrganization(q, realmId, orgId))) throw problem.notFound('no such organization');
  return orgId;
}
