// What the OAuth flows need from the running process: sign-in's needs (authorization requests
// start transactions) and the offline verifier of this service's own access tokens.
import type { AccessTokenVerifier } from '../access/verify-access-token.ts';
import type { SigninDeps } from '../signin/signin.deps.ts';

export interface OAuthDeps extends SigninDeps {
  tokenVerifier: AccessTokenVerifier;
}
