// The live-access context's public surface: stored opaque access tokens.
// Other folders reach this context's tables through this file, never through its *.repo.ts files
// (docs/architecture.md, import rules).
export { findLiveOpaqueToken } from './opaque-tokens.repo.ts';
