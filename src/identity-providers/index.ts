// The identity-providers context's public surface: connections to upstream providers, the
// identities linked to accounts, and the sign-in state kept while an upstream is involved.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).
export * from './connection.ts';
export { activeConnections, findConnection, findConnectionByRef } from './connections.repo.ts';
export { setConnectionStateInTx } from './connections.service.ts';
export { effectiveClaims, effectiveConfig, PRESETS } from './presets.ts';
