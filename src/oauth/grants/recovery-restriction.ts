// The token endpoint's half of doc 1, Errors, case rule 1: no admin-audience token for a
// recovery-restricted sign-in (the session signed in with a recovery code, or the account is in
// recovery_restricted). The API edge holds the other half (src/api/api-auth.ts).
import { adminAudience } from '../../kernel/audiences.ts';
import type { GrantContext } from './grant-context.ts';

export const isRecoveryRestricted = (sessionRestricted: boolean | null, userState: string | null): boolean =>
  sessionRestricted === true || userState === 'recovery_restricted';

/** The refusal (invalid_grant) when the audience to issue is the administration API's; else null. */
export function restrictedAudienceError(
  g: GrantContext,
  audience: string,
  restricted: boolean,
): string | null {
  if (!restricted || audience !== adminAudience(g.settings.publicOrigin, g.realm.name)) return null;
  return 'a sign-in with a recovery code does not get administration tokens';
}
