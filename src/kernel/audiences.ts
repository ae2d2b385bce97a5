// The issuer and the audiences of the three built-in resources every realm has (docs/decisions.md,
// built-in audiences): the administration API, the account (/me) API and UserInfo. They derive
// from the public origin, so a changed origin moves them; grants and configuration name them
// builtin:<name>.

export const BUILTIN_ADMIN = 'builtin:admin';
export const BUILTIN_ACCOUNT = 'builtin:account';
export const BUILTIN_USERINFO = 'builtin:userinfo';
export const issuerOf = (publicOrigin: string, realmName: string): string =>
  `${publicOrigin}/realms/${realmName}`;
export const adminAudience = (publicOrigin: string, realmName: string): string =>
  `${publicOrigin}/api/v1/realms/${realmName}`;
export const accountAudience = (publicOrigin: string, realmName: string): string =>
  `${publicOrigin}/api/v1/realms/${realmName}/me`;
/** UserInfo's audience under an issuer: also the second audience of a token whose grant has openid. */
export const userinfoAudienceOf = (issuer: string): string => `${issuer}/oauth/userinfo`;
export const userinfoAudience = (publicOrigin: string, realmName: string): string =>
  userinfoAudienceOf(issuerOf(publicOrigin, realmName));
