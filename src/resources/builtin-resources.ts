// The three resources every realm has (decision D8): the administration API, the account
// (/me) API and UserInfo. They are derived from the public origin rather than stored, so a
// changed origin moves their audiences with it; grants name them builtin:<name>.
import {
  accountAudience,
  adminAudience,
  BUILTIN_ACCOUNT,
  BUILTIN_ADMIN,
  BUILTIN_USERINFO,
  userinfoAudience,
} from '../kernel/audiences.ts';
import type { ResourceDefinition } from './resource.ts';

/** OpenID Connect scopes this service answers at UserInfo and puts in ID tokens. */
export const OIDC_SCOPES = ['openid', 'profile', 'email', 'phone', 'offline_access'] as const;

const builtin = (
  id: string,
  name: string,
  audience: string,
  scopes: readonly string[],
): ResourceDefinition => ({
  id,
  builtin: true,
  name,
  audience,
  // The service checks its own APIs live on every request (doc 2, Revocation exposure).
  verificationMode: 'strict_online',
  tokenFormat: 'jwt',
  accessTokenTtlSeconds: 300,
  scopes: scopes.map((s) => ({ name: s })),
  requiresOrganization: false,
  impersonationEnabled: false,
  impersonationPolicy: null,
  signingAlgorithm: '',
  state: 'active',
  version: 1,
});

// The token endpoint and introspection ask on every request, so each realm's three are built once
// per process (frozen, since every caller shares them). Bounded: past the cap the cache starts over.
const MAX_CACHED_REALMS = 1000;
const cache = new Map<string, readonly ResourceDefinition[]>();

const frozen = (r: ResourceDefinition): ResourceDefinition => {
  for (const scope of r.scopes) Object.freeze(scope);
  Object.freeze(r.scopes);
  return Object.freeze(r);
};

export function builtinResources(publicOrigin: string, realmName: string): readonly ResourceDefinition[] {
  const key = `${publicOrigin} ${realmName}`;
  let found = cache.get(key);
  if (!found) {
    found = Object.freeze([
      frozen(builtin(BUILTIN_ADMIN, 'Administration API', adminAudience(publicOrigin, realmName), [])),
      frozen(builtin(BUILTIN_ACCOUNT, 'Account API', accountAudience(publicOrigin, realmName), [])),
      frozen(builtin(BUILTIN_USERINFO, 'UserInfo', userinfoAudience(publicOrigin, realmName), OIDC_SCOPES)),
    ]);
    if (cache.size >= MAX_CACHED_REALMS) cache.clear();
    cache.set(key, found);
  }
  return found;
}
