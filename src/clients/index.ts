// The clients context's public surface: client rows, origins and client authentication rows.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).

export {
  CLIENT_SIGNING_ALGORITHMS,
  digestJti,
  MAX_ASSERTION_LIFETIME_SECONDS,
} from './client-assertion.ts';
export type { ClientAuthFacts, ClientAuthRow } from './client-auth.repo.ts';
export {
  clientAuthFactsFrom,
  clientAuthFactsJsonOf,
  clientAuthJsonOf,
  clientAuthRowFrom,
  clientForAuthJson,
  deleteExpiredAssertionJtis,
  recordAssertionJti,
  secretsAsOf,
} from './client-auth.repo.ts';
export { setClientStateInTx, updateClient } from './client-changes.service.ts';
export {
  GRANT,
  publicJwkProblem,
  pushReceiverUriProblem,
  TOKEN_ENDPOINT_AUTH_METHODS,
} from './client-rules.ts';
export type { ClientRecord, ClientRow } from './clients.repo.ts';
export {
  clientRowJsonSql,
  clientRowOfJson,
  findClient,
  findClientJwks,
  findClientRecord,
  isClientOrigin,
  listClientRecords,
} from './clients.repo.ts';
export { type CreateClientInput, decodeCreateClient, type UpdateClientInput } from './clients.schema.ts';
export { type Change, type ClientsDeps, createClient, newClientProblems } from './clients.service.ts';
export {
  findSamlClientByEntityId,
  findSamlSettings,
  type NameIdFormat,
  presentSamlSettings,
  SAML_CONTINUE_PATH,
  type SamlAttribute,
  type SamlSettings,
  samlContinueUrl,
} from './saml-clients.ts';
export { TLS_SUBJECT_MEMBERS } from './tls-client-auth.ts';
export { presentTlsClientAuth, tlsInputOf } from './tls-client-auth-rules.ts';
export { claimsSatisfied, WORKLOAD_LIMITS, type WorkloadRule } from './workload-federation.ts';
export { workloadRulesForIssuer } from './workload-federations.repo.ts';
