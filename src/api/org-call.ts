// Pieces every route file of this context shares: the call context and the options of routes
// bound to one organization.
import type { OrgCall } from '../organizations/organizations.types.ts';
import type { Queryable } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { findLiveOrganization } from '../roles/index.ts';
import { idParam } from '../roles/roles.decode.ts';
import type { ApiCaller } from './api-auth.ts';
import type { RequestCall } from './api-route.ts';

export type OrgParams = { org: string };

/** The registrar's call with what this context's rules read of the caller. */
export function orgCall(call: RequestCall, caller: ApiCaller): OrgCall {
  return { ...call, permissions: caller.permissions, caller };
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
