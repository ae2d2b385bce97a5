// The realm's before_token_issuance hooks (docs/hooks.md), called by a grant before its
// transaction opens: what the hook is told is read on its own, outside any transaction, and the
// grant then runs as always, with the claims the hooks added. A fail_closed hook that did not
// answer refuses the request before anything is spent or issued. A realm whose row names no token
// hook (realms.hook_kinds) pays no statement here: the hot client_credentials path stays as it is.
import { beforeTokenIssuance, type HookClaims, type HookData, withoutProtected } from '../../hooks/index.ts';
import { oauthError } from '../../kernel/oauth-error.ts';
import type { GrantContext } from './grant-context.ts';

/** The user a grant would issue for, as read before its transaction; null when there is none. */
export interface TokenSubject {
  user_id: string;
  scopes: string[];
  org_id: string | null;
}

/** A service principal's token (client_credentials, JWT bearer): no user, the principal instead. */
export interface ServiceSubject {
  user_id: null;
  service_principal_id: string;
  scopes: string[];
  org_id: string | null;
}

export async function withTokenHooks(
  g: GrantContext,
  grantType: string,
  readSubject: () => Promise<TokenSubject | ServiceSubject | null>,
): Promise<GrantContext> {
  const verdict = await beforeTokenIssuance(g.app.hooks, {
    realmId: g.realm.id,
    clientId: g.caller.client.client_id,
    kindsInUse: g.realm.hook_kinds,
    data: async (): Promise<HookData | null> => {
      const s = await readSubject();
      return s ? { grant_type: grantType, ...s } : null;
    },
  });
  if (verdict.kind === 'unavailable')
    throw oauthError.temporarilyUnavailable('a token hook of the realm did not answer; nothing was issued');
  return { ...g, hookClaims: verdict.claims };
}

/**
 * The access token claims of the hooks, for a grant that issues only an access token and writes
 * nothing before it (client_credentials, JWT bearer, token exchange).
 */
export async function accessTokenHookClaims(
  g: GrantContext,
  grantType: string,
  subject: TokenSubject | ServiceSubject,
): Promise<HookClaims | null> {
  const hooked = await withTokenHooks(g, grantType, async () => subject);
  const claims = withoutProtected(hooked.hookClaims?.accessToken);
  return Object.keys(claims).length > 0 ? claims : null;
}
