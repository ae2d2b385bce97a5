// The users context's public surface: accounts, identifiers and password verifiers.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).
export {
  countUsers,
  findPasswordVerifier,
  findUserByIdentifier,
  identifierTypeOf,
  insertIdentifier,
  insertUser,
  markIdentifierVerified,
  removeRequiredAction,
  setPassword,
  setUserState,
} from './users.repo.ts';
