// The reference server of the benchmark: oidc-provider (panva, a devDependency of this project,
// 9.13.3) configured like the shared bench-peer kit's server, on 127.0.0.1:$PORT with its in-memory
// adapter, or with ADAPTER=pg its PostgreSQL adapter (peer-pg-adapter.mjs, PG_URL) so that a durable
// store is compared with ours. One confidential client ("bench", client_secret_basic, client_credentials) and three
// resource servers by resource indicator: JWT RS256, JWT ES256 and opaque access tokens, 300 s
// each; introspection and revocation on. bench/run.ts starts it pinned to the server's core.
import * as jose from 'jose';
import Provider from 'oidc-provider';

// The same client and resource URIs are in common.ts (PEER_CLIENT, PEER_RESOURCES).
const PEER_CLIENT_ID = 'bench';
const PEER_CLIENT_SECRET = 'bench-secret-0123456789abcdef0123456789abcdef';

const PORT = Number(process.env.PORT || 3000);
const ISSUER = `http://127.0.0.1:${PORT}`;

const rsa = await jose.generateKeyPair('RS256', { modulusLength: 2048, extractable: true });
const ec = await jose.generateKeyPair('ES256', { extractable: true });
const keys = [
  { ...(await jose.exportJWK(rsa.privateKey)), kid: 'rs1', alg: 'RS256', use: 'sig' },
  { ...(await jose.exportJWK(ec.privateKey)), kid: 'es1', alg: 'ES256', use: 'sig' },
];

const resourceServers = {
  'https://api.example.test/jwt-rs256': { accessTokenFormat: 'jwt', jwt: { sign: { alg: 'RS256' } } },
  'https://api.example.test/jwt-es256': { accessTokenFormat: 'jwt', jwt: { sign: { alg: 'ES256' } } },
  'https://api.example.test/opaque': { accessTokenFormat: 'opaque' },
};

const configuration = {
  clients: [
    {
      client_id: PEER_CLIENT_ID,
      client_secret: PEER_CLIENT_SECRET,
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'orders:read orders:write',
    },
  ],
  jwks: { keys },
  cookies: { keys: ['bench-cookie-key-not-secret'] },
  scopes: ['openid', 'orders:read', 'orders:write'],
  ttl: { ClientCredentials: 300, AccessToken: 300 },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => 'https://api.example.test/jwt-rs256',
      useGrantedResource: () => true,
      getResourceServerInfo: (_ctx, resource) => {
        const rs = resourceServers[resource];
        if (!rs) throw new Provider.errors.InvalidTarget();
        return { scope: 'orders:read orders:write', audience: resource, accessTokenTTL: 300, ...rs };
      },
    },
  },
};
if (process.env.ADAPTER === 'pg') {
  const { default: PgAdapter, init } = await import('./peer-pg-adapter.mjs');
  await init();
  configuration.adapter = PgAdapter;
}
const provider = new Provider(ISSUER, configuration);
provider.on('server_error', (_ctx, err) => console.error('server_error', err));
provider.listen(PORT, '127.0.0.1');
console.log(
  JSON.stringify({
    listening: ISSUER,
    pid: process.pid,
    adapter: process.env.ADAPTER === 'pg' ? 'pg' : 'memory',
  }),
);
