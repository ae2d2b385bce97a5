// Token endpoint helpers for tests: client secrets, form posts with client authentication, and
// the headless code flow from sign-in to token response.
import { OPERATOR_ACTOR } from '../../src/audit/audit.types.ts';
import { issueClientSecret } from '../../src/clients/client-secrets.ts';
import type { ClientRow } from '../../src/clients/clients.repo.ts';
import type { RealmRow } from '../../src/realms/realm.repo.ts';
import type { Harness } from './harness.ts';
import { type JsonResponse, json } from './signin-driver.ts';
import { codeOf, PASSWORD, passwordSignIn, REDIRECT } from './signin-kit.ts';

export async function clientSecret(h: Harness, realm: RealmRow, client: ClientRow): Promise<string> {
  const keyring = h.ctx.keyring;
  if (!keyring) throw new Error('no keyring');
  const issued = await h.ctx.db.tx((tx) =>
    issueClientSecret(tx, keyring, realm.id, client.id, h.ctx.clock.now(), { actor: OPERATOR_ACTOR }),
  );
  return issued.secret;
}

export const basic = (clientId: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** POST /realms/{realm}/oauth/<endpoint> with a form body and optional Basic credentials. */
export async function oauthPost(
  h: Harness,
  realm: RealmRow,
  endpoint: string,
  params: Record<string, string | string[]>,
  auth?: { clientId: string; secret: string },
  headers: Record<string, string> = {},
): Promise<JsonResponse> {
  const form = new URLSearchParams();
  for (const [k, v] of Object.entries(params))
    for (const one of Array.isArray(v) ? v : [v]) form.append(k, one);
  return json(
    await h.get(`/realms/${realm.name}/oauth/${endpoint}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        ...(auth ? { authorization: basic(auth.clientId, auth.secret) } : {}),
        ...headers,
      },
      body: form.toString(),
    }),
  );
}

export interface CodeFlowOptions {
  email?: string;
  /** Members of the transaction start body (scope, resource, nonce, ...). */
  start?: Record<string, unknown>;
}

/** Headless sign-in to an authorization code; returns the code and its PKCE verifier. */
export async function signInForCode(
  h: Harness,
  realm: RealmRow,
  clientId: string,
  opts: CodeFlowOptions = {},
): Promise<{ code: string; verifier: string; sessionState: JsonResponse }> {
  const { tx, state } = await passwordSignIn(
    h,
    realm.name,
    clientId,
    opts.email ?? 'alice@example.com',
    PASSWORD,
    opts.start ?? {},
  );
  if (state.body.status !== 'completed')
    throw new Error(`sign-in not completed: ${JSON.stringify(state.body)}`);
  return { code: codeOf(state.body.redirect_to), verifier: tx.verifier, sessionState: state };
}

/** A completed transaction's code exchanged at the token endpoint by a confidential client. */
export const exchangeCode = (
  h: Harness,
  realm: RealmRow,
  client: { clientId: string; secret: string },
  redirectTo: string,
  verifier: string,
  params: Record<string, string | string[]> = {},
): Promise<JsonResponse> =>
  oauthPost(
    h,
    realm,
    'token',
    {
      grant_type: 'authorization_code',
      code: codeOf(redirectTo),
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      ...params,
    },
    client,
  );

/** The full code flow of a confidential client: sign-in, then the code exchanged at the token endpoint. */
export async function codeFlow(
  h: Harness,
  realm: RealmRow,
  client: { clientId: string; secret: string },
  opts: CodeFlowOptions & { tokenParams?: Record<string, string> } = {},
): Promise<JsonResponse> {
  const { code, verifier } = await signInForCode(h, realm, client.clientId, opts);
  return oauthPost(
    h,
    realm,
    'token',
    {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
      ...opts.tokenParams,
    },
    client,
  );
}

export interface ResourceSeed {
  audience: string;
  scopes?: string[];
  tokenFormat?: 'jwt' | 'opaque';
  ttl?: number;
  requiresOrganization?: boolean;
}

/** A registered resource row (the administration API has its own tests). */
export async function seedResource(h: Harness, realm: RealmRow, r: ResourceSeed): Promise<string> {
  const id = `res_${Math.random().toString(36).slice(2, 12)}`;
  await h.ctx.db.query(
    `insert into resources (realm_id, id, name, audience, verification_mode, token_format, access_token_ttl_seconds,
       scopes, requires_organization, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, now(), now())`,
    [
      realm.id,
      id,
      r.audience,
      r.audience,
      r.tokenFormat === 'opaque' ? 'strict_online' : 'offline',
      r.tokenFormat ?? 'jwt',
      r.ttl ?? 300,
      JSON.stringify((r.scopes ?? []).map((name) => ({ name }))),
      r.requiresOrganization ?? false,
    ],
  );
  return id;
}

export async function seedGrant(
  h: Harness,
  realm: RealmRow,
  client: ClientRow,
  resourceId: string,
  g: { scopes: string[]; subjectTypes?: string[]; exchange?: { acceptFrom: string[]; maxScopes: string[] } },
): Promise<void> {
  await h.ctx.db.query(
    `insert into client_resource_grants (realm_id, client_row_id, resource_id, allowed_scopes, subject_types,
       exchange_policy, created_at, updated_at) values ($1, $2, $3, $4, $5, $6, now(), now())`,
    [
      realm.id,
      client.id,
      resourceId,
      g.scopes,
      g.subjectTypes ?? ['user'],
      g.exchange
        ? JSON.stringify({ acceptFromAudiences: g.exchange.acceptFrom, maxScopes: g.exchange.maxScopes })
        : null,
    ],
  );
}

/** Lets the client introspect the resource's tokens. */
export const registerIntrospector = (h: Harness, realm: RealmRow, resourceId: string, client: ClientRow) =>
  h.ctx.db.query(
    'insert into resource_introspectors (realm_id, resource_id, client_row_id, created_at) values ($1, $2, $3, now())',
    [realm.id, resourceId, client.id],
  );

/** A service client with its service principal and a secret. */
export async function seedServiceClient(
  h: Harness,
  realm: RealmRow,
  clientId: string,
  grantTypes: string[] = ['client_credentials'],
): Promise<{ client: ClientRow; principalId: string; creds: { clientId: string; secret: string } }> {
  const client = await h.createClient(realm, {
    clientId,
    name: clientId,
    type: 'service',
    redirectUris: [],
    grantTypes,
    tokenEndpointAuthMethod: 'client_secret_basic',
  });
  const principalId = `spr_${Math.random().toString(36).slice(2, 12)}`;
  await h.ctx.db.query(
    `insert into service_principals (realm_id, id, client_row_id, state, created_at, updated_at)
     values ($1, $2, $3, 'active', now(), now())`,
    [realm.id, principalId, client.id],
  );
  return { client, principalId, creds: { clientId, secret: await clientSecret(h, realm, client) } };
}

/** Registers each audience as a resource (built-in ids and audiences are only granted) and grants it to the client. */
export async function grantResources(
  h: Harness,
  realm: RealmRow,
  client: ClientRow,
  audiences: string[],
  scopes: string[] = [],
): Promise<void> {
  const origin = h.ctx.config.server.publicOrigin;
  for (const audience of audiences) {
    const builtin = [
      ['builtin:admin', `${origin}/api/v1/realms/${realm.name}`],
      ['builtin:account', `${origin}/api/v1/realms/${realm.name}/me`],
      ['builtin:userinfo', `${origin}/realms/${realm.name}/oauth/userinfo`],
    ].find(([id, uri]) => audience === id || audience === uri)?.[0];
    const id = builtin ?? (await seedResource(h, realm, { audience, scopes }));
    await seedGrant(h, realm, client, id, { scopes });
  }
}

/**
 * A service client `clientId` holding client_credentials tokens for `audience`, and an introspector
 * of that resource: token() asks for one, active() introspects one.
 */
export async function serviceTokenSeed(h: Harness, realm: RealmRow, audience: string, clientId = 'billing') {
  const resource = await seedResource(h, realm, { audience, scopes: ['orders:read'] });
  const svc = await seedServiceClient(h, realm, clientId);
  await seedGrant(h, realm, svc.client, resource, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const rs = await seedServiceClient(h, realm, `${clientId}-introspector`);
  await registerIntrospector(h, realm, resource, rs.client);
  const token = () =>
    oauthPost(h, realm, 'token', { grant_type: 'client_credentials', resource: audience }, svc.creds);
  const active = async (accessToken: string) =>
    (await oauthPost(h, realm, 'introspect', { token: accessToken }, rs.creds)).body.active === true;
  return { svc, token, active };
}

/** Access tokens issued so far by the token endpoint (service_tokens_total, outcome success). */
export async function tokensIssued(h: Harness): Promise<number> {
  return tokensIssuedIn(await h.ctx.metrics.registry.metrics());
}

/** The same, read from a process's Prometheus text (its /metrics). */
export function tokensIssuedIn(text: string): number {
  return text
    .split('\n')
    .filter((l) => l.startsWith('service_tokens_total{') && l.includes('outcome="success"'))
    .reduce((n, l) => n + Number(l.split(' ').at(-1)), 0);
}
