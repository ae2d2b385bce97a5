// The relying party of federation (docs/federation.md, Sign-in through an upstream): the
// authorization request to a connection's upstream (code flow, PKCE S256, state, and a nonce for
// OpenID Connect), and the callback's checks and code exchange, all done by oauth4webapi: state,
// the RFC 9207 iss parameter, the token response, and the ID token (issuer, audience, expiry,
// nonce, and its signature against the upstream's key set). Every request goes through the
// egress-guarded outbound client, behind the connection's circuit. Network I/O only: callers keep
// it outside their database transactions.
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import {
  type ConnectionRow,
  effectiveClaims,
  effectiveConfig,
  isMultiTenant,
  MAX_METADATA_BYTES,
  TENANT_PLACEHOLDER,
} from '../identity-providers/index.ts';
import type { OutboundHttp } from '../platform/net/outbound-http.ts';
import {
  authnRequestUrl,
  newSamlRequestId,
  type SamlEndpoints,
  type SamlOutcome,
  spMetadataXml,
  validateSamlResponse,
} from './saml-sp.ts';
import { UpstreamCircuits } from './upstream-circuit.ts';
import { clientAuthOf, clientSecretOf, type SecretSources } from './upstream-client-auth.ts';
import { type EgressSettings, type Exchange, newExchange } from './upstream-http.ts';
import { identityOf, type UpstreamIdentity } from './upstream-identity.ts';
import { MetadataCache, MetadataMismatch } from './upstream-metadata.ts';

export interface UpstreamRequest {
  url: string;
  state: string;
  nonce: string;
  codeVerifier: string;
}

/** What the sign-in keeps between the redirect and the callback. */
export interface PendingRequest {
  state: string;
  nonce: string;
  codeVerifier: string;
  redirectUri: string;
}

export interface UpstreamTokens {
  accessToken: string;
  refreshToken: string | null;
  scope: string | null;
  expiresIn: number | null;
}

export type CallbackOutcome =
  | { kind: 'identity'; identity: UpstreamIdentity; tokens: UpstreamTokens }
  /** The upstream could not be reached, failed, or is misconfigured: the upstream_unavailable notice. */
  | { kind: 'unavailable'; reason: string }
  /** The upstream answered with an error (the person declined, or it refused the request). */
  | { kind: 'declined'; error: string }
  /** The answer failed a check: a failed proof. */
  | { kind: 'refused'; reason: string };

export class UpstreamUnavailable extends Error {}

export interface UpstreamClientOptions {
  outbound: OutboundHttp;
  egress: EgressSettings;
  secrets: SecretSources;
  /** The service clock, in milliseconds (the tests' clock moves it). */
  now(): number;
  /** tokens.clock_skew: the tolerance of SAML NotBefore and NotOnOrAfter. */
  clockSkewMs?: number;
  circuits?: UpstreamCircuits;
}

const tenantPattern = (template: string): RegExp =>
  new RegExp(
    `^${template
      .split(TENANT_PLACEHOLDER)
      .map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('([A-Za-z0-9._-]{1,128})')}$`,
  );

/** The tenant a multi-tenant connection's issuer names, when the connection accepts it. */
function tenantIssuer(c: ConnectionRow, issuer: string): string | null {
  const m = tenantPattern(c.issuer).exec(issuer);
  if (!m?.[1]) return null;
  const allowed = effectiveConfig(c).allowed_tenants ?? [];
  return allowed.length === 0 || allowed.includes(m[1]) ? issuer : null;
}

const circuitKey = (c: ConnectionRow) => `${c.realm_id}/${c.id}`;

export class UpstreamClient {
  readonly #o: UpstreamClientOptions;
  readonly #metadata = new MetadataCache();
  readonly #circuits: UpstreamCircuits;
  readonly #jwks = new Map<string, oauth.ExportedJWKSCache>();

  constructor(o: UpstreamClientOptions) {
    this.#o = o;
    this.#circuits = o.circuits ?? new UpstreamCircuits();
  }

  #client(c: ConnectionRow): oauth.Client {
    return {
      client_id: String(effectiveConfig(c).client_id),
      // The service clock decides what counts as expired, as for everything else it checks.
      [oauth.clockSkew]: Math.round((this.#o.now() - Date.now()) / 1000),
      [oauth.clockTolerance]: 30,
    };
  }

  /** Runs one exchange behind the connection's circuit, counting an outage against it. */
  async #guarded<T>(c: ConnectionRow, work: (x: Exchange) => Promise<T>): Promise<T> {
    const key = circuitKey(c);
    if (!this.#circuits.admit(key, this.#o.now())) throw new UpstreamUnavailable('circuit_open');
    const exchange = newExchange(this.#o.outbound, this.#o.egress);
    try {
      const out = await work(exchange);
      if (exchange.outage) this.#circuits.failed(key, this.#o.now());
      else this.#circuits.succeeded(key);
      return out;
    } catch (e) {
      if (exchange.outage || e instanceof MetadataMismatch) {
        this.#circuits.failed(key, this.#o.now());
        throw new UpstreamUnavailable(e instanceof Error ? e.message : 'unreachable');
      }
      this.#circuits.succeeded(key);
      throw e;
    }
  }

  /** The upstream authorization URL; throws UpstreamUnavailable when discovery fails. */
  async start(c: ConnectionRow, redirectUri: string, loginHint: string | null): Promise<UpstreamRequest> {
    const as = await this.#guarded(c, (x) => this.#metadata.of(c, x, this.#o.now()));
    if (!as.authorization_endpoint) throw new UpstreamUnavailable('no authorization endpoint');
    const config = effectiveConfig(c);
    const codeVerifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const scopes = new Set(config.scopes ?? []);
    if (c.kind === 'oidc') scopes.add('openid');
    const url = new URL(as.authorization_endpoint);
    const params: Record<string, string> = {
      client_id: String(config.client_id),
      redirect_uri: redirectUri,
      response_type: 'code',
      scope: [...scopes].join(' '),
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      ...(c.kind === 'oidc' ? { nonce } : {}),
      ...(config.response_mode === 'form_post' ? { response_mode: 'form_post' } : {}),
      ...(loginHint ? { login_hint: loginHint } : {}),
    };
    for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
    return { url: url.href, state, nonce, codeVerifier };
  }

  /** Checks the authorization response and redeems its code. Never throws for what the upstream sent. */
  async finish(c: ConnectionRow, pending: PendingRequest, params: URLSearchParams): Promise<CallbackOutcome> {
    try {
      return await this.#guarded(c, (x) => this.#finish(c, pending, params, x));
    } catch (e) {
      if (e instanceof UpstreamUnavailable) return { kind: 'unavailable', reason: e.message };
      if (e instanceof oauth.AuthorizationResponseError) return { kind: 'declined', error: e.error };
      return { kind: 'refused', reason: e instanceof Error ? e.message : 'refused' };
    }
  }

  async #finish(
    c: ConnectionRow,
    pending: PendingRequest,
    params: URLSearchParams,
    x: Exchange,
  ): Promise<CallbackOutcome> {
    const client = this.#client(c);
    let as = await this.#metadata.of(c, x, this.#o.now());
    const iss = params.get('iss');
    if (isMultiTenant(c.issuer) && iss) {
      const tenant = tenantIssuer(c, iss);
      if (!tenant)
        return { kind: 'refused', reason: 'the iss parameter names a tenant the connection does not accept' };
      as = { ...as, issuer: tenant };
    }
    // state, and iss when the upstream sends it or promises to (RFC 9207): the mix-up defence.
    const checked = oauth.validateAuthResponse(as, client, params, pending.state);
    // A secret that cannot be opened (a key reference gone, a root key version missing) is the
    // connection's configuration failing, not the person's proof.
    const auth = await clientAuthOf(c, this.#o.secrets, Math.floor(this.#o.now() / 1000)).catch(() => {
      throw new UpstreamUnavailable('the client secret cannot be read');
    });
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth,
      checked,
      pending.redirectUri,
      pending.codeVerifier,
      x.options,
    );
    if (isMultiTenant(c.issuer)) {
      const idToken = await response
        .clone()
        .json()
        .then((b: unknown) => (b as { id_token?: unknown } | null)?.id_token)
        .catch(() => undefined);
      const tokenIss = typeof idToken === 'string' ? decodeJwt(idToken).iss : undefined;
      const tenant = typeof tokenIss === 'string' ? tenantIssuer(c, tokenIss) : null;
      if (!tenant)
        return { kind: 'refused', reason: 'the ID token names a tenant the connection does not accept' };
      as = { ...as, issuer: tenant };
    }
    const oidc = c.kind === 'oidc';
    const result = await oauth.processAuthorizationCodeResponse(as, client, response, {
      expectedNonce: oidc ? pending.nonce : oauth.expectNoNonce,
      requireIdToken: oidc,
    });
    let claims: Record<string, unknown> = {};
    if (oidc) {
      await oauth.validateApplicationLevelSignature(as, response, {
        ...x.options,
        [oauth.jwksCache]: this.#jwksCache(c, as),
      });
      claims = { ...(oauth.getValidatedIdTokenClaims(result) ?? {}) };
    }
    claims = { ...(await this.#profile(c, as, client, result, claims, x)), ...claims };
    const identity = identityOf(as.issuer, claims, effectiveClaims(c), effectiveConfig(c));
    if (!identity) return { kind: 'refused', reason: 'the upstream named no usable subject' };
    return {
      kind: 'identity',
      identity,
      tokens: {
        accessToken: result.access_token,
        refreshToken: result.refresh_token ?? null,
        scope: result.scope ?? null,
        expiresIn: result.expires_in ?? null,
      },
    };
  }

  #jwksCache(c: ConnectionRow, as: oauth.AuthorizationServer): oauth.ExportedJWKSCache {
    const key = `${c.realm_id}/${c.id}/${as.jwks_uri}`;
    let cache = this.#jwks.get(key);
    if (!cache) {
      cache = {} as oauth.ExportedJWKSCache;
      this.#jwks.set(key, cache);
    }
    return cache;
  }

  /**
   * What the profile endpoint adds: UserInfo for OpenID Connect when the ID token lacks the email
   * the mapping reads (the subject must match), the profile endpoint for plain OAuth 2.0, and for
   * GitHub-like upstreams the primary verified address from the emails endpoint. The ID token's
   * claims win over the profile's.
   */
  async #profile(
    c: ConnectionRow,
    as: oauth.AuthorizationServer,
    client: oauth.Client,
    result: oauth.TokenEndpointResponse,
    idClaims: Record<string, unknown>,
    x: Exchange,
  ): Promise<Record<string, unknown>> {
    const mapping = effectiveClaims(c);
    const config = effectiveConfig(c);
    const bearer = { authorization: `Bearer ${result.access_token}` };
    let profile: Record<string, unknown> = {};
    if (c.kind === 'oidc') {
      if (!as.userinfo_endpoint || (mapping.email && idClaims[mapping.email] !== undefined)) return {};
      const res = await oauth.userInfoRequest(as, client, result.access_token, x.options);
      profile = { ...(await oauth.processUserInfoResponse(as, client, String(idClaims.sub), res)) };
    } else {
      const body = await x.getJson(String(as.userinfo_endpoint), bearer);
      if (!body || typeof body !== 'object' || Array.isArray(body))
        throw new Error('the profile endpoint answered no profile');
      profile = { ...(body as Record<string, unknown>) };
    }
    if (config.emails_endpoint && mapping.email) {
      const list = await x.getJson(config.emails_endpoint, bearer);
      const primary = Array.isArray(list)
        ? (list as { email?: unknown; primary?: unknown; verified?: unknown }[]).find(
            (e) => e.primary === true,
          )
        : undefined;
      if (primary && typeof primary.email === 'string') {
        profile[mapping.email] = primary.email;
        if (mapping.email_verified) profile[mapping.email_verified] = primary.verified === true;
      }
    }
    return profile;
  }

  /** SAML: the connection's SP private key, opened from its sealed form. */
  async #spKey(c: ConnectionRow): Promise<string> {
    const key = await clientSecretOf(c, this.#o.secrets).catch(() => null);
    if (!key || !c.sp_certificate) throw new UpstreamUnavailable('the SP key cannot be read');
    return key;
  }

  /** SAML: the IdP URL with a signed AuthnRequest; its ID travels as the request's nonce. */
  async startSaml(c: ConnectionRow, endpoints: SamlEndpoints): Promise<UpstreamRequest> {
    const privateKeyPem = await this.#spKey(c);
    const state = oauth.generateRandomState();
    const requestId = newSamlRequestId();
    const url = await authnRequestUrl(
      c,
      { endpoints, privateKeyPem, clockSkewMs: this.#o.clockSkewMs ?? 60_000, requestId },
      state,
    );
    return { url, state, nonce: requestId, codeVerifier: '' };
  }

  /** SAML: checks a SAMLResponse answering the request with this ID. Never throws for what the IdP sent. */
  async finishSaml(
    c: ConnectionRow,
    endpoints: SamlEndpoints,
    request: { id: string; createdAt: Date },
    samlResponse: string,
  ): Promise<SamlOutcome | { kind: 'unavailable'; reason: string }> {
    let privateKeyPem: string;
    try {
      privateKeyPem = await this.#spKey(c);
    } catch (e) {
      return { kind: 'unavailable', reason: e instanceof Error ? e.message : 'unavailable' };
    }
    return validateSamlResponse(
      c,
      {
        endpoints,
        privateKeyPem,
        clockSkewMs: this.#o.clockSkewMs ?? 60_000,
        requestId: request.id,
        requestCreatedAt: request.createdAt,
      },
      samlResponse,
    );
  }

  /** SAML: an IdP's metadata document, through the egress guard; throws when it cannot be read. */
  async fetchSamlMetadata(url: string): Promise<string> {
    const res = await newExchange(this.#o.outbound, this.#o.egress).fetchText(url, MAX_METADATA_BYTES);
    if (res === null) throw new Error('the metadata could not be fetched');
    return res;
  }

  /** SAML: the connection's SP metadata document. */
  async samlMetadata(c: ConnectionRow, endpoints: SamlEndpoints): Promise<string> {
    return spMetadataXml(c, endpoints, await this.#spKey(c));
  }

  /** A connection changed or was enabled again: its circuit starts closed. */
  forget(c: Pick<ConnectionRow, 'realm_id' | 'id'>): void {
    this.#circuits.reset(`${c.realm_id}/${c.id}`);
  }
}
