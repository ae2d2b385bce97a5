// The realm's provider metadata: OpenID Connect Discovery 1.0 section 3 and RFC 8414 section 2
// (one document serves both). It advertises what this release implements and nothing more, so a
// client that trusts it never meets a refusal for something listed here.

import { DPOP_ALGORITHMS } from '../access/dpop-proof.ts';
import { CLIENT_SIGNING_ALGORITHMS, TOKEN_ENDPOINT_AUTH_METHODS } from '../clients/index.ts';
import { issuerOf } from '../kernel/audiences.ts';
import { UI_LOCALES } from '../kernel/ui-locales.ts';
import { SIGNING_ALGORITHMS } from '../keys/jws.ts';
import type { SigningAlgorithm } from '../platform/config/settings.ts';
import { OIDC_SCOPES } from '../resources/builtin-resources.ts';
import { SCOPE_CLAIMS } from './tokens/scope-claims.ts';

const AUTH_METHODS = TOKEN_ENDPOINT_AUTH_METHODS;
// Introspection needs a confidential client (spec doc 2, Authentication 7).
const INTROSPECTION_AUTH_METHODS = AUTH_METHODS.filter((m) => m !== 'none');

// What ID tokens, access tokens and UserInfo answers carry (oauth/tokens, userinfo.routes.ts).
const CLAIMS = [
  'iss',
  'sub',
  'aud',
  'exp',
  'iat',
  'auth_time',
  'nonce',
  'acr',
  'amr',
  'sid',
  'at_hash',
  ...SCOPE_CLAIMS,
];

/**
 * The metadata document of a realm. `signingAlgorithms` are those of the realm's published keys,
 * so a cached copy stays true across a key rotation that changes the algorithm.
 */
export function providerMetadata(
  publicOrigin: string,
  realmName: string,
  signingAlgorithms: readonly SigningAlgorithm[],
  requirePushedRequests = false,
  registrationEnabled = false,
  mtlsOrigin: string | null = null,
): Record<string, unknown> {
  const issuer = issuerOf(publicOrigin, realmName);
  const oauth = `${issuer}/oauth`;
  const algs = SIGNING_ALGORITHMS.filter((a) => signingAlgorithms.includes(a));
  return {
    issuer,
    authorization_endpoint: `${oauth}/authorize`,
    token_endpoint: `${oauth}/token`,
    userinfo_endpoint: `${oauth}/userinfo`,
    jwks_uri: `${issuer}/jwks`,
    revocation_endpoint: `${oauth}/revoke`,
    introspection_endpoint: `${oauth}/introspect`,
    end_session_endpoint: `${oauth}/logout`,
    device_authorization_endpoint: `${oauth}/device_authorization`,
    pushed_authorization_request_endpoint: `${oauth}/par`,
    // Only where the realm's client_registration policy turns registration on (RFC 7591).
    ...(registrationEnabled ? { registration_endpoint: `${oauth}/register` } : {}),
    // The realm's policy (interaction); a single client can be held to it on its own (RFC 9126 section 6).
    require_pushed_authorization_requests: requirePushedRequests,
    scopes_supported: [...OIDC_SCOPES],
    response_types_supported: ['code'],
    // Matches the response modes the authorization endpoint accepts (signin/start.ts).
    response_modes_supported: ['query', 'jwt', 'query.jwt'],
    grant_types_supported: [
      'authorization_code',
      'refresh_token',
      'client_credentials',
      'urn:ietf:params:oauth:grant-type:token-exchange',
      'urn:ietf:params:oauth:grant-type:device_code',
      'urn:ietf:params:oauth:grant-type:jwt-bearer',
    ],
    code_challenge_methods_supported: ['S256'],
    token_endpoint_auth_methods_supported: AUTH_METHODS,
    token_endpoint_auth_signing_alg_values_supported: [...SIGNING_ALGORITHMS],
    revocation_endpoint_auth_methods_supported: AUTH_METHODS,
    revocation_endpoint_auth_signing_alg_values_supported: [...SIGNING_ALGORITHMS],
    introspection_endpoint_auth_methods_supported: INTROSPECTION_AUTH_METHODS,
    introspection_endpoint_auth_signing_alg_values_supported: [...SIGNING_ALGORITHMS],
    subject_types_supported: ['public'],
    id_token_signing_alg_values_supported: algs,
    authorization_signing_alg_values_supported: algs,
    prompt_values_supported: ['none', 'login', 'consent', 'select_account', 'create'],
    // The acr a sign-in earns (signin/complete.ts), each also asked for by acr_values.
    acr_values_supported: ['basic', 'mfa', 'phishing_resistant'],
    // The languages of the login UI and of the authorization endpoint's error pages.
    ui_locales_supported: [...UI_LOCALES],
    claims_supported: CLAIMS,
    claims_parameter_supported: false,
    // Signed request objects (RFC 9101) at the authorization and PAR endpoints; request_uri takes
    // only this service's own PAR URNs, never a URL to fetch (OpenID Connect Discovery 1.0).
    request_parameter_supported: true,
    request_object_signing_alg_values_supported: [...CLIENT_SIGNING_ALGORITHMS],
    request_uri_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
    frontchannel_logout_supported: false,
    // Logout tokens to each client's backchannel_logout_uri, always with sid (ID tokens carry it).
    backchannel_logout_supported: true,
    backchannel_logout_session_supported: true,
    // RFC 9449 section 5.1: the proof algorithms of spec doc 1, Authentication 8.
    dpop_signing_alg_values_supported: [...DPOP_ALGORITHMS],
    // RFC 8705: certificate-bound access tokens, and the endpoints on the mutual-TLS listener.
    tls_client_certificate_bound_access_tokens: true,
    ...(mtlsOrigin ? { mtls_endpoint_aliases: mtlsAliases(issuerOf(mtlsOrigin, realmName)) } : {}),
  };
}

/** RFC 8705 section 5: the endpoints that take client certificates, on the mutual-TLS origin. */
function mtlsAliases(issuer: string): Record<string, string> {
  const oauth = `${issuer}/oauth`;
  return {
    token_endpoint: `${oauth}/token`,
    revocation_endpoint: `${oauth}/revoke`,
    introspection_endpoint: `${oauth}/introspect`,
    userinfo_endpoint: `${oauth}/userinfo`,
    device_authorization_endpoint: `${oauth}/device_authorization`,
    pushed_authorization_request_endpoint: `${oauth}/par`,
  };
}
