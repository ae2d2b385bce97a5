// The realm's before_token_issuance hooks (docs/hooks.md), called by a user grant before its
// transaction opens: what the hook is told is read on its own, outside any transaction, and the
// grant then runs as always, with the claims the hooks added. A fail_closed hook that did not
// answer refuses the request before anything is spent or issued.
import { beforeTokenIssuance, type HookData } from '../../hooks/index.ts';
import { oauthError } from '../../kernel/oauth-error.ts';
import type { GrantContext } from './grant-context.ts';

/** The user a grant would issue for, as read before its transaction; null when there is none. */
export interface TokenSubject {
  user_id: string;
  scopes: string[];
  org_id: string | null;
}

export async function withTokenHooks(
  g: GrantContext,
  grantType: string,
  readSubject: () => Promise<TokenSubject | null>,
): Promise<GrantContext> {
  const verdict = await beforeTokenIssuance(g.app.hooks, {
    realmId: g.realm.id,
    clientId: g.caller.client.client_id,
    kindsInUse: g.realm.hook_kinds,
    data: async (): Promise<HookData | null> => {
      const s = await readSubject();
      return s ? { grant_type: grantType, user_id: s.user_id, scopes: s.scopes, org_id: s.org_id } : null;
    },
  });
  if (verdict.kind === 'unavailable')
    throw oauthError.temporarilyUnavailable('a token hook of the realm did not answer; nothing was issued');
  return { ...g, hookClaims: verdict.claims };
}
