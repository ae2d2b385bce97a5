// @proudauth/verifier: access-token verification for Node resource servers of a ProudAuth realm,
// in the three modes of document 2, Revocation exposure (README.md beside this folder).
export { accessTokenOf, bearerChallenge, bearerToken, dpopChallenge } from './bearer.ts';
export { type BoundedStateOptions, BoundedStateVerifier } from './bounded-state.ts';
export {
  checkDpopProof,
  DPOP_ALGORITHMS,
  type DpopReplayCache,
  type DpopRequest,
  MemoryReplayCache,
} from './dpop.ts';
export { type VerificationCode, VerificationError } from './errors.ts';
export {
  type IntrospectionOptions,
  type IntrospectionVerifier,
  introspectionVerifier,
} from './introspection.ts';
export {
  type AccessClaims,
  ALGORITHMS,
  type OfflineOptions,
  type OfflineVerifier,
  offlineVerifier,
  type Verified,
} from './offline.ts';
export { RevocationState, type SessionEvent } from './revocation-state.ts';
export { streamUriOf } from './stream-client.ts';
