// The identity-providers context's public surface: connections to upstream providers, the
// identities linked to accounts, and the sign-in state kept while an upstream is involved.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).
export * from './connection.ts';
export { activeConnections, findConnection, findConnectionByRef } from './connections.repo.ts';
export { setConnectionStateInTx } from './connections.service.ts';
export {
  countUpstreamTokens,
  findLinkBySubject,
  hasActiveLink,
  insertLink,
  type LinkedIdentityRow,
  type Provenance,
  storeUpstreamTokens,
  touchLink,
} from './linked-identities.repo.ts';
export { effectiveClaims, effectiveConfig, PRESETS } from './presets.ts';
export { MAX_METADATA_BYTES } from './saml-idp-metadata.ts';
export {
  answerSamlRequest,
  claimFederationRequest,
  deleteExpiredSamlAssertions,
  deleteSigninFederation,
  type FederationRequestRow,
  findOpenSamlRequest,
  findSigninFederation,
  insertFederationRequest,
  type PendingIdentity,
  rememberSamlAssertion,
  type SigninFederation,
  type SigninFederationRow,
  saveSigninFederation,
} from './signin-federation.repo.ts';
