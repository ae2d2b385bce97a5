// The users context's public surface: accounts, identifiers and password verifiers.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).

export { type IdentifierType, identifierKey, isValidIdentifier } from './identifiers.ts';
export {
  decodeImported,
  describeImported,
  encodeImported,
  type ImportedVerifier,
  ImportedVerifierError,
  isImported,
  VERIFIER_BOUNDS,
} from './imported-verifier.ts';
export {
  type FirebaseParameters,
  type Parsed as ParsedVerifier,
  parseBcrypt,
  parseFirebase,
  parseKeycloak,
  parsePhc,
  strictBase64,
  type VerifierError,
} from './imported-verifier-parse.ts';
export { verifyImported } from './imported-verifier-verify.ts';
export { endSessionsAfterPasswordChange } from './password-change.ts';
export { type PasswordHasher, type PasswordVerifier, sealFirebaseKey } from './password-hasher.ts';
export { keepReplacedPassword, passwordsRefused, refuseReusedPassword } from './password-reuse.ts';
export { minStrength, refuseWeakPassword, weakPasswordError } from './password-strength.ts';
export { findProfileClaims, type ProfileClaimsRecord } from './profile-claims.repo.ts';
export {
  type ExternalIdRow,
  externalIdsOf,
  findExternalIds,
  type ImportedAccount,
  insertImportedAccounts,
  sourceKeyOf,
  takenIdentifiers,
} from './user-import.repo.ts';
export {
  addAccountRequiredActionInTx,
  changeAccountStateInTx,
  deleteAccountInTx,
  revokeAccountSessionsInTx,
  type StateChange,
  updateAccountProfileInTx,
} from './users.admin.ts';
export { ADMIN_REQUIRED_ACTIONS, type AdminRequiredAction } from './users.decode.ts';
export type { UserRow } from './users.repo.ts';
export {
  addRequiredAction,
  cancelDeletion,
  countUsers,
  findPasswordVerifier,
  findUserByIdentifier,
  findUserByVerifiedIdentifier,
  identifierTypeOf,
  insertIdentifier,
  insertUser,
  listIdentifiers,
  lockUser,
  markGuest,
  markIdentifierVerified,
  mergeUserAttributes,
  primaryEmail,
  primaryEmailContact,
  removeRequiredAction,
  repepperPassword,
  requestDeletion,
  setPassword,
  setUserState,
} from './users.repo.ts';
export type { AdminCall } from './users.service.ts';
export { createUserInTx, type NewUser, type UserView, viewOf } from './users.service.ts';
