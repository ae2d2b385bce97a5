// The authorization server metadata of a connection's upstream: discovered (OpenID Connect
// Discovery, checked by oauth4webapi) for OIDC connections, written out from the configuration for
// plain OAuth 2.0 ones, with configured endpoints over discovered ones. A multi-tenant issuer's
// discovery document names its issuer with a placeholder ({tenantid} at Microsoft); that document
// is read here, since no tenant's issuer can match it. Discovered metadata is kept per process
// for an hour, keyed by the connection's version, so a change is seen at once.
import * as oauth from 'oauth4webapi';
import {
  type ConnectionRow,
  effectiveConfig,
  isMultiTenant,
  TENANT_PLACEHOLDER,
} from '../identity-providers/index.ts';
import type { Exchange } from './upstream-http.ts';

const METADATA_TTL_MS = 3600_000;

/** The discovered document does not describe the configured issuer: a configuration error. */
export class MetadataMismatch extends Error {}

const stripSlash = (s: string) => s.replace(/\/+$/, '');

/** Microsoft's discovery documents write the tenant placeholder as {tenantid}. */
const sameTemplate = (discovered: string, configured: string): boolean =>
  stripSlash(discovered.replaceAll('{tenantid}', TENANT_PLACEHOLDER)) === stripSlash(configured);

async function discover(c: ConnectionRow, exchange: Exchange): Promise<oauth.AuthorizationServer> {
  const config = effectiveConfig(c);
  if (isMultiTenant(c.issuer)) {
    const json = await exchange.getJson(config.discovery_url as string, {});
    if (json === null) throw new MetadataMismatch('no discovery document');
    const doc = json as Record<string, unknown>;
    if (typeof doc.issuer !== 'string' || !sameTemplate(doc.issuer, c.issuer))
      throw new MetadataMismatch('the discovery document names another issuer');
    return { ...doc, issuer: c.issuer } as oauth.AuthorizationServer;
  }
  const issuer = new URL(c.issuer);
  // A template's discovery URL is for its {tenant} issuer (Microsoft's organizations endpoint); one
  // tenant's issuer is discovered at its own well-known address unless the connection names one.
  const discoveryUrl = c.config.discovery_url;
  const response = discoveryUrl
    ? await exchange.options[oauth.customFetch](discoveryUrl, {
        method: 'GET',
        headers: { accept: 'application/json' },
      })
    : await oauth.discoveryRequest(issuer, { algorithm: 'oidc', ...exchange.options });
  // Tokens are checked against the issuer exactly as the upstream writes it in its document.
  return oauth.processDiscoveryResponse(issuer, response);
}

/** Configured endpoints win over discovered ones. */
function withConfigured(c: ConnectionRow, as: oauth.AuthorizationServer): oauth.AuthorizationServer {
  const config = effectiveConfig(c);
  return {
    ...as,
    ...(config.authorization_endpoint ? { authorization_endpoint: config.authorization_endpoint } : {}),
    ...(config.token_endpoint ? { token_endpoint: config.token_endpoint } : {}),
    ...(config.userinfo_endpoint ? { userinfo_endpoint: config.userinfo_endpoint } : {}),
  };
}

export class MetadataCache {
  readonly #entries = new Map<string, { at: number; as: oauth.AuthorizationServer }>();

  async of(c: ConnectionRow, exchange: Exchange, now: number): Promise<oauth.AuthorizationServer> {
    if (c.kind === 'oauth2') return withConfigured(c, { issuer: c.issuer });
    const key = `${c.realm_id}/${c.id}/${c.version}`;
    const hit = this.#entries.get(key);
    if (hit && now - hit.at < METADATA_TTL_MS) return hit.as;
    const as = withConfigured(c, await discover(c, exchange));
    for (const k of this.#entries.keys()) if (k.startsWith(`${c.realm_id}/${c.id}/`)) this.#entries.delete(k);
    this.#entries.set(key, { at: now, as });
    return as;
  }
}
