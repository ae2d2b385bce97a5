// The sessions context's public surface: sessions, grants, refresh families and account-wide revocation.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).

export { endAccountSessions, newTokensLiveFrom, tokensLiveFromRevocation } from './account-revocation.ts';
export type { AccountRevocation, GrantRow } from './grants.repo.ts';
export {
  findLiveGrant,
  grantUpsert,
  liveGrantJsonSql,
  revokeAccount,
  revokeSession,
  upsertGrant,
} from './grants.repo.ts';
export type { RefreshFamilyRow } from './refresh-tokens.repo.ts';
export {
  addToken,
  findFamilyByToken,
  isRefreshTokenShape,
  lockByToken,
  markRotated,
  revokeFamily,
  startFamily,
  touchFamily,
} from './refresh-tokens.repo.ts';
export { liveSessionSql } from './session-liveness.ts';
export type { NewSession, SessionRow } from './sessions.repo.ts';
export {
  findLiveSessionByCookie,
  insertSession,
  lockLiveSession,
  reuseSession,
  revokeOtherSessions,
  sessionInsert,
} from './sessions.repo.ts';
