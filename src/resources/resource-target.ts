// Which resource a token is for and which scopes it may carry (spec doc 1, API resource
// definition and GrantSpec; RFC 8707): only scopes the resource declares and the client's grant
// allows, for the subject types the grant names.
import { ACCOUNT_CLIENT_ID, CLI_CLIENT_ID } from '../clients/builtin-clients.ts';
import { BUILTIN_ACCOUNT, BUILTIN_ADMIN, BUILTIN_USERINFO, userinfoAudience } from '../kernel/audiences.ts';
import { oauthError } from '../kernel/oauth-error.ts';
import type { Queryable } from '../platform/db/db.ts';
import { OIDC_SCOPES } from './builtin-resources.ts';
import type { ResourceDefinition, ResourceGrant } from './resource.ts';
import { findResourceByAudience, findResourceGrant, type RealmRef } from './resources.repo.ts';

export type SubjectType = 'user' | 'service_principal';

export interface TargetClient {
  /** Row id */
  id: string;
  client_id: string;
  /** The OpenID scopes a dynamically registered client may hold; null or absent: all of them. */
  oidc_scopes?: readonly string[] | null;
}

export interface Target {
  resource: ResourceDefinition;
  grant: ResourceGrant;
}

/**
 * Grants every realm gives without an administrator: UserInfo's OpenID scopes to every client
 * acting for a user, the administration and account APIs to the operator CLI, and the account API
 * to the account page's client.
 */
function implicitGrant(
  client: TargetClient,
  resource: ResourceDefinition,
  subject: SubjectType,
): ResourceGrant | null {
  if (subject !== 'user') return null;
  const base = {
    clientRowId: client.id,
    resourceId: resource.id,
    subjectTypes: ['user'],
    exchangePolicy: null,
  };
  if (resource.id === BUILTIN_USERINFO)
    return { ...base, allowedScopes: [...(client.oidc_scopes ?? OIDC_SCOPES)] };
  if (
    client.client_id === CLI_CLIENT_ID &&
    (resource.id === BUILTIN_ADMIN || resource.id === BUILTIN_ACCOUNT)
  ) {
    return { ...base, allowedScopes: [] };
  }
  if (client.client_id === ACCOUNT_CLIENT_ID && resource.id === BUILTIN_ACCOUNT) {
    return { ...base, allowedScopes: [] };
  }
  return null;
}

/** The resource behind an audience and the client's grant for it; invalid_target otherwise. */
export async function resolveTarget(
  q: Queryable,
  realm: RealmRef,
  publicOrigin: string,
  client: TargetClient,
  audience: string | null,
  subject: SubjectType,
): Promise<Target> {
  const uri = audience ?? userinfoAudience(publicOrigin, realm.name);
  const resource = await findResourceByAudience(q, realm, publicOrigin, uri);
  const explicit = resource ? await findResourceGrant(q, realm.id, client.id, resource.id) : null;
  return targetOf(client, resource, explicit, subject);
}

/** The same decision on rows a caller loaded itself. */
export function targetOf(
  client: TargetClient,
  resource: ResourceDefinition | null,
  explicit: ResourceGrant | null,
  subject: SubjectType,
): Target {
  if (resource?.state !== 'active') throw oauthError.invalidTarget('unknown resource');
  const grant = explicit?.subjectTypes.includes(subject)
    ? explicit
    : implicitGrant(client, resource, subject);
  if (!grant) throw oauthError.invalidTarget('the client is not granted this resource');
  // requires_organization is checked where the organization is known (requireOrganization): an
  // authorization request leaves the choice to its sign-in transaction.
  return { resource, grant };
}

/**
 * A token for a resource with requires_organization carries exactly one org_id (spec doc 1, API
 * resource definition): without an organization context there is no such token.
 */
export function requireOrganization(t: Target, orgId: string | null): void {
  if (t.resource.requiresOrganization && orgId === null) {
    throw oauthError.invalidTarget('this resource requires an organization');
  }
}

/** The scopes a grant allows on its resource. */
export function allowedScopes(t: Target): Set<string> {
  const declared = new Set(t.resource.scopes.map((s) => s.name));
  return new Set(t.grant.allowedScopes.filter((s) => declared.has(s)));
}

/** Requested scopes kept where allowed; out-of-grant ones dropped (authorization code, refresh). */
export const narrowScopes = (t: Target, requested: readonly string[]): string[] => {
  const allowed = allowedScopes(t);
  return requested.filter((s) => allowed.has(s));
};

/** Requested scopes that must all be allowed (client credentials); none requested means all allowed. */
export function strictScopes(t: Target, requested: readonly string[] | null): string[] {
  const allowed = allowedScopes(t);
  if (requested === null) return [...allowed];
  const refused = requested.filter((s) => !allowed.has(s));
  if (refused.length > 0) throw oauthError.invalidScope(`scope not granted: ${refused.join(' ')}`);
  return [...requested];
}
