// The users context's public surface: accounts, identifiers and password verifiers.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).

export { endSessionsAfterPasswordChange } from './password-change.ts';
export {
  cancelDeletion,
  countUsers,
  findPasswordVerifier,
  findUserByIdentifier,
  identifierTypeOf,
  insertIdentifier,
  insertUser,
  listIdentifiers,
  lockUser,
  markGuest,
  markIdentifierVerified,
  mergeUserAttributes,
  primaryEmail,
  removeRequiredAction,
  repepperPassword,
  requestDeletion,
  setPassword,
  setUserState,
} from './users.repo.ts';
export { createUserInTx, type NewUser } from './users.service.ts';
