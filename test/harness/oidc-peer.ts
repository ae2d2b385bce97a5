// oidc-provider (panva), the most used OpenID provider for Node and written by nobody on this
// project, as the upstream identity provider of the federation tests: one confidential client
// (ours), accounts whose claims the test names, and its development login and consent pages,
// which a test drives over HTTP (headless) or in Chromium.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

export interface PeerAccount {
  email: string;
  email_verified: boolean;
  name: string;
}

export interface OidcPeer {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Claims per login name: whatever is typed as login at the development page signs in as it. */
  accounts: Map<string, PeerAccount>;
  /**
   * Plays the person at the development pages (login, then consent) for an authorization URL and
   * answers the URL the peer sends the browser back to, without opening it.
   */
  signIn(authorizationUrl: string, login: string): Promise<string>;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

export async function startOidcPeer(
  t: Pick<TestContext, 'after'>,
  redirectUris: string[],
): Promise<OidcPeer> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const accounts = new Map<string, PeerAccount>();
  const clientSecret = 'peer-client-secret-0123456789abcdef0123456789';
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: 'proudauth',
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), kid: 'peer-1', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: ['federation-test-cookie-key'] },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: true } },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({ sub: id, ...(accounts.get(id) ?? {}) }),
    }),
  });
  // The development pages warn on start; they are what a test drives here.
  provider.on('server_error', () => {});
  server.on('request', provider.callback());
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function signIn(authorizationUrl: string, login: string): Promise<string> {
    const jar = new Map<string, string>();
    const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
    let url = authorizationUrl;
    let form: URLSearchParams | null = null;
    for (let hop = 0; hop < 20; hop++) {
      const res = await fetch(url, {
        method: form ? 'POST' : 'GET',
        redirect: 'manual',
        headers: {
          cookie: cookie(),
          ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
        },
        ...(form ? { body: form.toString() } : {}),
      });
      for (const line of res.headers.getSetCookie()) {
        const [pair = ''] = line.split(';');
        const eq = pair.indexOf('=');
        const value = pair.slice(eq + 1);
        if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) jar.delete(pair.slice(0, eq));
        else jar.set(pair.slice(0, eq), value);
      }
      if (REDIRECTS.has(res.status)) {
        const next = new URL(res.headers.get('location') ?? '', url).href;
        await res.body?.cancel();
        if (!next.startsWith(issuer)) return next;
        url = next;
        form = null;
        continue;
      }
      const html = await res.text();
      if (res.status !== 200) throw new Error(`oidc-provider answered ${res.status}: ${html.slice(0, 500)}`);
      const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
      if (!action) throw new Error(`no form on the page: ${html.slice(0, 500)}`);
      url = new URL(action.replace(/&amp;/g, '&'), url).href;
      form = html.includes('name="login"')
        ? new URLSearchParams({ prompt: 'login', login, password: 'any password' })
        : new URLSearchParams({ prompt: 'consent' });
    }
    throw new Error('the peer never sent the browser back');
  }

  return { issuer, clientId: 'proudauth', clientSecret, accounts, signIn };
}
