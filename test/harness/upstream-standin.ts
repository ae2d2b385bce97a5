// A local stand-in for an upstream provider, for the federation tests that need to make it
// misbehave on purpose (a wrong issuer, an expired ID token, a replayed nonce, an outage) and for
// the presets (Google, Entra ID with {tenantid} discovery, GitHub, GitLab, Apple), which cannot be
// reached from a test machine. It answers like the real ones where the service looks: discovery,
// an authorization endpoint that approves at once, a token endpoint checking the client secret
// and PKCE, a key set, UserInfo, and GitHub's profile and emails. The real peers are
// oidc-provider and a second ProudAuth realm (federation-peers tests).
import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { exportJWK, generateKeyPair, importJWK, type JWK, jwtVerify, SignJWT } from 'jose';

export interface StandinAccount {
  sub: string;
  email?: string;
  email_verified?: boolean | string;
  name?: string;
  amr?: string[];
  acr?: string;
  /** GitHub-like profile id (a number). */
  githubId?: number;
  login?: string;
}

export type Endpoint = 'discovery' | 'authorize' | 'token' | 'jwks' | 'userinfo' | 'user' | 'emails';

/** What the stand-in does to its next answers; each test sets what it needs. */
export interface Misbehaviour {
  /** Answer these endpoints with this status (an outage), or drop the connection (0). */
  fail?: Partial<Record<Endpoint, number>>;
  /** Claims written over the ID token's (iss, aud, exp, nonce...). */
  idToken?: Record<string, unknown>;
  /** The nonce of an earlier authorization request instead of this one's. */
  replayNonce?: boolean;
  /** The iss parameter of the authorization response (RFC 9207); null leaves it out. */
  issParam?: string | null;
  /** Answer the authorization request with this error instead of a code. */
  authorizeError?: string;
}

export interface Standin {
  url: string;
  /** The issuer the stand-in signs with (its URL, or `url/{tenant}` forms for multi-tenant). */
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** The account the next authorization signs in. */
  account: StandinAccount;
  misbehave: Misbehaviour;
  /** Requests seen per endpoint. */
  hits: Record<Endpoint, number>;
  /** Apple: the public key its client secrets must verify with, and its key id. */
  appleKey: { privatePem: string; kid: string; teamId: string };
  /**
   * Runs the authorization request a federation/start answered: returns the callback URL the
   * browser would be sent to (code, state and iss), without following it.
   */
  authorize(externalRedirect: string): Promise<string>;
}

export interface StandinOptions {
  /** Multi-tenant: the issuer has a tenant segment, discovery names it {tenantid}. */
  tenant?: string;
  /** GitHub-like plain OAuth 2.0 endpoints. */
  github?: boolean;
  /** Apple-like: client secret is an ES256 JWT, the answer comes by form_post. */
  apple?: boolean;
  /** Advertise authorization_response_iss_parameter_supported and send iss (RFC 9207). */
  issParameter?: boolean;
}

const b64url = (b: Buffer) => b.toString('base64url');
const s256 = (v: string) => b64url(createHash('sha256').update(v).digest());

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
};

export async function startStandin(t: Pick<TestContext, 'after'>, o: StandinOptions = {}): Promise<Standin> {
  const { publicKey, privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk: JWK = { ...(await exportJWK(publicKey)), kid: 'standin-1', alg: 'RS256', use: 'sig' };
  const apple = await generateKeyPair('ES256', { extractable: true });
  const applePem = (await import('jose')).exportPKCS8(apple.privateKey);
  const grants = new Map<
    string,
    { nonce: string; challenge: string; redirectUri: string; account: StandinAccount }
  >();
  const tokens = new Map<string, StandinAccount>();
  const nonces: string[] = [];
  const hits = Object.fromEntries(
    ['discovery', 'authorize', 'token', 'jwks', 'userinfo', 'user', 'emails'].map((e) => [e, 0]),
  ) as Record<Endpoint, number>;

  let base = '';
  const issuerOf = () => (o.tenant ? `${base}/${o.tenant}/v2.0` : base);
  const s: Standin = {
    url: '',
    issuer: '',
    clientId: 'proudauth-broker',
    clientSecret: b64url(randomBytes(24)),
    account: { sub: 'upstream-1', email: 'ada@upstream.example', email_verified: true, name: 'Ada Upstream' },
    misbehave: {},
    hits,
    appleKey: { privatePem: await applePem, kid: 'APPLEKEY1', teamId: 'TEAM123456' },
    async authorize(externalRedirect) {
      const res = await fetch(externalRedirect, { redirect: 'manual' });
      const location = res.headers.get('location');
      if (res.status !== 303 || !location)
        throw new Error(`stand-in authorize: ${res.status} ${await res.text()}`);
      return location;
    },
  };

  const failed = (res: ServerResponse, e: Endpoint): boolean => {
    hits[e] += 1;
    const status = s.misbehave.fail?.[e];
    if (status === undefined) return false;
    if (status === 0) res.socket?.destroy();
    else send(res, status, { error: 'server_error' });
    return true;
  };

  async function clientOk(req: IncomingMessage, form: URLSearchParams): Promise<boolean> {
    if (o.apple) {
      const assertion = form.get('client_secret') ?? '';
      try {
        const key = await importJWK(await exportJWK(apple.publicKey), 'ES256');
        const { payload, protectedHeader } = await jwtVerify(assertion, key, {
          issuer: s.appleKey.teamId,
          subject: s.clientId,
          audience: issuerOf(),
        });
        return protectedHeader.kid === s.appleKey.kid && payload.sub === form.get('client_id');
      } catch {
        return false;
      }
    }
    const basic = req.headers.authorization?.startsWith('Basic ')
      ? Buffer.from(req.headers.authorization.slice(6), 'base64')
          .toString('utf8')
          .split(':')
          .map(decodeURIComponent)
      : null;
    const [id, secret] = basic ?? [form.get('client_id'), form.get('client_secret')];
    return id === s.clientId && secret === s.clientSecret;
  }

  async function idToken(account: StandinAccount, nonce: string): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const claims: Record<string, unknown> = {
      sub: account.sub,
      nonce: s.misbehave.replayNonce ? (nonces.at(-2) ?? nonce) : nonce,
      ...(account.email ? { email: account.email, email_verified: account.email_verified ?? false } : {}),
      ...(account.name ? { name: account.name } : {}),
      ...(account.amr ? { amr: account.amr } : {}),
      ...(account.acr ? { acr: account.acr } : {}),
      ...(o.tenant ? { tid: o.tenant } : {}),
      ...s.misbehave.idToken,
    };
    return new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', kid: jwk.kid as string })
      .setIssuer(String(s.misbehave.idToken?.iss ?? issuerOf()))
      .setAudience(String(s.misbehave.idToken?.aud ?? s.clientId))
      .setIssuedAt(now)
      .setExpirationTime(Number(s.misbehave.idToken?.exp ?? now + 300))
      .sign(privateKey);
  }

  const server: Server = createServer(async (req, res) => {
    const url = new URL(req.url ?? '/', base);
    const path = url.pathname;
    try {
      if (path.endsWith('/.well-known/openid-configuration')) {
        if (failed(res, 'discovery')) return;
        return send(res, 200, {
          // Microsoft's organizations document names the placeholder; one tenant's names the tenant.
          issuer: o.tenant && !path.startsWith(`/${o.tenant}/`) ? `${base}/{tenantid}/v2.0` : issuerOf(),
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          jwks_uri: `${base}/jwks`,
          userinfo_endpoint: `${base}/userinfo`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
          code_challenge_methods_supported: ['S256'],
          ...(o.issParameter ? { authorization_response_iss_parameter_supported: true } : {}),
        });
      }
      if (path === '/authorize' || path === '/login/oauth/authorize') {
        if (failed(res, 'authorize')) return;
        const p = url.searchParams;
        const redirect = new URL(p.get('redirect_uri') ?? '');
        const code = b64url(randomBytes(16));
        const nonce = p.get('nonce') ?? '';
        nonces.push(nonce);
        grants.set(code, {
          nonce,
          challenge: p.get('code_challenge') ?? '',
          redirectUri: p.get('redirect_uri') ?? '',
          account: { ...s.account },
        });
        if (s.misbehave.authorizeError) redirect.searchParams.set('error', s.misbehave.authorizeError);
        else redirect.searchParams.set('code', code);
        redirect.searchParams.set('state', p.get('state') ?? '');
        const iss =
          s.misbehave.issParam === undefined ? (o.issParameter ? issuerOf() : null) : s.misbehave.issParam;
        if (iss) redirect.searchParams.set('iss', iss);
        res.writeHead(303, { location: redirect.href });
        return res.end();
      }
      if (path === '/token' || path === '/login/oauth/access_token') {
        if (failed(res, 'token')) return;
        const form = new URLSearchParams(await readBody(req));
        const grant = grants.get(form.get('code') ?? '');
        grants.delete(form.get('code') ?? '');
        if (!(await clientOk(req, form))) return send(res, 401, { error: 'invalid_client' });
        if (
          !grant ||
          grant.redirectUri !== form.get('redirect_uri') ||
          s256(form.get('code_verifier') ?? '') !== grant.challenge
        )
          return send(res, 400, { error: 'invalid_grant' });
        const access = b64url(randomBytes(16));
        tokens.set(access, grant.account);
        return send(res, 200, {
          access_token: access,
          token_type: o.github ? 'bearer' : 'Bearer',
          expires_in: 3600,
          scope: form.get('scope') ?? 'openid',
          ...(o.github
            ? {}
            : {
                id_token: await idToken(grant.account, grant.nonce),
                refresh_token: b64url(randomBytes(16)),
              }),
        });
      }
      if (path === '/jwks') {
        if (failed(res, 'jwks')) return;
        return send(res, 200, { keys: [jwk] });
      }
      const bearer = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /i, ''));
      if (path === '/userinfo') {
        if (failed(res, 'userinfo')) return;
        if (!bearer) return send(res, 401, { error: 'invalid_token' });
        return send(res, 200, {
          sub: bearer.sub,
          email: bearer.email,
          email_verified: bearer.email_verified,
          name: bearer.name,
        });
      }
      if (path === '/user') {
        if (failed(res, 'user')) return;
        if (!bearer) return send(res, 401, { message: 'Bad credentials' });
        return send(res, 200, {
          id: bearer.githubId ?? 4711,
          login: bearer.login ?? 'ada',
          name: bearer.name,
          email: null,
        });
      }
      if (path === '/user/emails') {
        if (failed(res, 'emails')) return;
        if (!bearer) return send(res, 401, { message: 'Bad credentials' });
        return send(res, 200, [
          { email: 'ada-old@upstream.example', primary: false, verified: true },
          { email: bearer.email, primary: true, verified: bearer.email_verified === true },
        ]);
      }
      send(res, 404, { error: 'not_found' });
    } catch (e) {
      send(res, 500, { error: String(e) });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  server.closeIdleConnections?.();
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  s.url = base;
  s.issuer = o.tenant ? `${base}/{tenant}/v2.0` : base;
  return s;
}
