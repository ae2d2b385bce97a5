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

export function builtinResources(publicOrigin: string, realmName: string): ResourceDefinition[] {
  return [
    builtin(BUILTIN_ADMIN, 'Administration API', adminAudience(publicOrigin, realmName), []),
    builtin(BUILTIN_ACCOUNT, 'Account API', accountAudience(publicOrigin, realmName), []),
    builtin(BUILTIN_USERINFO, 'UserInfo', userinfoAudience(publicOrigin, realmName), OIDC_SCOPES),
  ];
}
