// @proudauth/verifier: access-token verification for Node resource servers of a ProudAuth realm,
// in the three modes of document 2, Revocation exposure (README.md beside this folder).
export { bearerChallenge, bearerToken } from './bearer.ts';
export { type BoundedStateOptions, BoundedStateVerifier } from './bounded-state.ts';
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
