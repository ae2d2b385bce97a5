// grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer (RFC 7523 section 2.1), used for
// workload federation (docs/workload-federation.md): a workload presents a JWT its own platform
// issued (a CI job's OpenID Connect token, a Kubernetes service-account token) in place of a
// secret, and gets its service client's access token, as client_credentials would give it. The
// client names itself by client_id (a client registered without a secret method authenticates by
// nothing else); the assertion must then meet one of the client's rules for its issuer: signed by
// a key of the rule's key set, for the rule's audience, short-lived, carrying an id that is
// accepted once, and showing an allowed value for every claim the rule constrains.
import { createLocalJWKSet, decodeJwt, type JSONWebKeySet, type JWTPayload, jwtVerify } from 'jose';
import {
  CLIENT_SIGNING_ALGORITHMS,
  claimsSatisfied,
  digestJti,
  MAX_ASSERTION_LIFETIME_SECONDS,
  recordAssertionJti,
  WORKLOAD_LIMITS,
  type WorkloadRule,
  workloadRulesForIssuer,
} from '../../clients/index.ts';
import { oauthError } from '../../kernel/oauth-error.ts';
import { clientCredentialsGrant } from './client-credentials.grant.ts';
import { type GrantContext, requiredParam, type TokenResponse } from './grant-context.ts';

export const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const MAX_JTI_BYTES = 256;

export async function jwtBearerGrant(g: GrantContext): Promise<TokenResponse> {
  const client = g.caller.client;
  if (client.type !== 'service') throw oauthError.unauthorizedClient('only service clients act as workloads');
  const assertion = requiredParam(g, 'assertion');
  if (Buffer.byteLength(assertion, 'utf8') > WORKLOAD_LIMITS.assertionBytes) {
    throw oauthError.invalidRequest(`the assertion exceeds ${WORKLOAD_LIMITS.assertionBytes} bytes`);
  }
  const issuer = unverifiedIssuer(assertion);
  const rules = await workloadRulesForIssuer(g.app.db, g.realm.id, client.id, issuer);
  const skew = Math.floor(g.app.config.tokens.clockSkewMs / 1000);
  let payload: JWTPayload | null = null;
  for (const rule of rules) {
    payload = await verifiedFor(g, rule, assertion, skew);
    if (payload !== null) break;
  }
  // One answer for every refusal: which rule, key or claim failed is not the caller's to learn.
  if (payload === null) throw oauthError.invalidGrant('the assertion is not accepted');
  const jti = payload.jti;
  const exp = payload.exp as number;
  if (typeof jti !== 'string' || jti === '' || Buffer.byteLength(jti, 'utf8') > MAX_JTI_BYTES) {
    throw oauthError.invalidGrant('the assertion is not accepted');
  }
  if (exp - g.now.getTime() / 1000 > MAX_ASSERTION_LIFETIME_SECONDS + skew) {
    throw oauthError.invalidGrant('the assertion lives too long');
  }
  // Kept under the client with the issuer in the digest, apart from its private_key_jwt assertion ids.
  const fresh = await recordAssertionJti(
    g.app.db,
    g.realm.id,
    client.id,
    digestJti(`workload\n${issuer}\n${jti}`),
    new Date((exp + skew) * 1000),
    g.now,
  );
  if (!fresh) throw oauthError.invalidGrant('the assertion was already used');
  return clientCredentialsGrant({ ...g, prefetched: null });
}

function unverifiedIssuer(assertion: string): string {
  try {
    const iss = decodeJwt(assertion).iss;
    if (typeof iss === 'string' && iss !== '') return iss;
  } catch {
    // Not a JWT: refused below like any other assertion no rule accepts.
  }
  throw oauthError.invalidGrant('the assertion is not accepted');
}

/** The assertion's claims when `rule` accepts it; null when it does not. */
async function verifiedFor(
  g: GrantContext,
  rule: WorkloadRule,
  assertion: string,
  skew: number,
): Promise<JWTPayload | null> {
  const keys: JSONWebKeySet =
    rule.jwks !== null
      ? (rule.jwks as JSONWebKeySet)
      : await g.app.workloadKeys.keysAt(rule.jwksUri as string);
  try {
    const { payload } = await jwtVerify(assertion, createLocalJWKSet(keys), {
      algorithms: CLIENT_SIGNING_ALGORITHMS,
      issuer: rule.issuer,
      audience: rule.audience,
      requiredClaims: ['exp', 'jti'],
      clockTolerance: skew,
      currentDate: g.now,
    });
    return claimsSatisfied(rule, payload) ? payload : null;
  } catch {
    return null;
  }
}
