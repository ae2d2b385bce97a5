// The clients context's public surface: client rows, origins and client authentication rows.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).

export type { ClientAuthRow } from './client-auth.repo.ts';
export {
  clientAuthJsonOf,
  clientAuthRowFrom,
  clientForAuthJson,
  deleteExpiredAssertionJtis,
} from './client-auth.repo.ts';
export type { ClientRow } from './clients.repo.ts';
export { findClient, findClientRecord, isClientOrigin } from './clients.repo.ts';
