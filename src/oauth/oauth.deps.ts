// What the OAuth flows need from the running process: sign-in's needs (authorization requests
// start transactions) and the offline verifier of this service's own access tokens.
import type { AccessTokenVerifier } from '../access/verify-access-token.ts';
import type { SigninDeps } from '../signin/signin.deps.ts';
import type { WorkloadKeySets } from './workload-key-sets.ts';

export interface OAuthDeps extends SigninDeps {
  tokenVerifier: AccessTokenVerifier;
  /** Key sets of workload federation issuers, fetched and kept by this process. */
  workloadKeys: WorkloadKeySets;
}
