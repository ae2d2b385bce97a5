// Shared steps of the federation tests: a harness whose public origin is its listener (upstreams
// send the browser back to it) and whose egress guard lets it reach providers on 127.0.0.1, a
// realm administrator, connections made through the API, and the moves of a federated sign-in:
// federation/start, the upstream's answer, and the callback as the browser would open it.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { ClientRow } from '../../src/clients/clients.repo.ts';
import type { RealmRow } from '../../src/realms/realm.repo.ts';
import { type ApiCallerKit, apiCaller } from './api-kit.ts';
import { type Harness, startHarness } from './harness.ts';
import { type HeadlessTx, type JsonResponse, startHeadless } from './signin-driver.ts';
import { type BrowserTx, count, PASSWORD, parseSetCookies, REDIRECT, type Row, rows } from './signin-kit.ts';
import { clientSecret } from './token-kit.ts';

export interface FederationSetup {
  h: Harness;
  realm: RealmRow;
  admin: ApiCallerKit;
  /** The web-app client (REDIRECT). */
  client: ClientRow;
}

/** Where browsers are sent back while a sign-in goes on (nothing listens there; tests read the URL). */
export const LOGIN_UI = 'https://login.example.com/';

export const FEDERATION_OVERRIDES = {
  // Upstreams in the tests listen on 127.0.0.1: the development switch lets the guard reach them.
  'delivery.allow_private_webhooks': true,
  'security.min_auth_response': '0s',
};

export async function federationSetup(
  t: TestContext,
  o: { overrides?: Record<string, unknown>; ui?: boolean } = {},
): Promise<FederationSetup> {
  const h = await startHarness(t, {
    publicOriginIsListener: true,
    overrides: { ...FEDERATION_OVERRIDES, ...(o.ui ? { 'ui.enabled': true } : {}), ...o.overrides },
  });
  const realm = await h.createRealm();
  if (!o.ui) await h.setPolicy(realm, { interaction: { login_ui_url: LOGIN_UI } });
  const client = await h.createClient(realm, {
    clientId: 'web-app',
    name: 'Web App',
    type: 'web',
    redirectUris: [REDIRECT],
  });
  const admin = await apiCaller(h, realm);
  return { h, realm, admin, client };
}

/** Creates a connection through the administration API; answers its row. */
export async function createConnection(
  s: FederationSetup,
  input: Record<string, unknown>,
  path = '/identity-providers',
): Promise<Row> {
  const res = await s.admin.call('POST', path, input);
  const body = (await res.json()) as Row;
  assert.equal(res.status, 201, JSON.stringify(body));
  return body;
}

/** A generic OpenID Connect connection to a stand-in upstream, with members over it. */
export const connectStandin = (
  s: FederationSetup,
  up: { issuer: string; clientId: string; clientSecret: string },
  alias = 'corp',
  extra: Record<string, unknown> = {},
  path = '/identity-providers',
) =>
  createConnection(
    s,
    {
      alias,
      display_name: alias === 'corp' ? 'Corp' : alias,
      issuer: up.issuer,
      config: { client_id: up.clientId },
      client_secret: up.clientSecret,
      ...extra,
    },
    path,
  );

/** The redirect URI an upstream must know for a connection. */
export const callbackOf = (s: FederationSetup, alias: string) =>
  `${s.h.publicUrl}/realms/${s.realm.name}/federation/${alias}/callback`;

/**
 * A second realm of the same server as the upstream of the first: its client for the first realm,
 * the person hedy@upstream.example, and the connection 'proud' pointing at it. Answers the realm.
 */
export async function realmAsUpstream(s: FederationSetup): Promise<RealmRow> {
  const upstream = await s.h.createRealm();
  const broker = await s.h.createClient(upstream, {
    clientId: 'downstream-realm',
    name: 'Downstream realm',
    type: 'web',
    redirectUris: [callbackOf(s, 'proud')],
    tokenEndpointAuthMethod: 'client_secret_basic',
  });
  const secret = await clientSecret(s.h, upstream, broker);
  await s.h.createUser(upstream, {
    email: 'hedy@upstream.example',
    password: PASSWORD,
    displayName: 'Hedy Lamarr',
  });
  await createConnection(s, {
    alias: 'proud',
    display_name: 'Our other realm',
    issuer: `${s.h.publicUrl}/realms/${upstream.name}`,
    config: { client_id: 'downstream-realm' },
    client_secret: secret,
  });
  return upstream;
}

export const headless = (s: FederationSetup, extra: Record<string, unknown> = {}) =>
  startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, extra);

/** federation/start; the answer must carry external_redirect. */
export async function startFederation(tx: HeadlessTx | BrowserTx, provider: string): Promise<JsonResponse> {
  const r = await tx.step('federation/start', { provider });
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r;
}

/** Opens the callback URL as the browser would: following nothing, with the pa_fed cookie if given. */
export async function openCallback(url: string, browserCookie?: string): Promise<Response> {
  return fetch(url, {
    redirect: 'manual',
    ...(browserCookie ? { headers: { cookie: `pa_fed=${browserCookie}` } } : {}),
  });
}

/** The pa_fed cookie federation/start set (browser mode). */
export const federationCookieOf = (r: JsonResponse): string | undefined =>
  parseSetCookies(r.headers).find((c) => c.name === 'pa_fed')?.value;

/** "Nothing linked, nothing issued": no link, no account made, no code, no session, no sign-in event. */
export async function nothingLinkedNothingIssued(s: FederationSetup, usersBefore: number): Promise<void> {
  const id = s.realm.id;
  assert.equal(
    await count(s.h, 'select 1 from linked_identities where realm_id = $1', [id]),
    0,
    'nothing linked',
  );
  assert.equal(
    await count(s.h, 'select 1 from users where realm_id = $1', [id]),
    usersBefore,
    'no account made',
  );
  assert.equal(
    await count(s.h, `select 1 from authorization_codes where realm_id = $1 and client_id = 'web-app'`, [id]),
    0,
    'no code',
  );
  const signedIn = await rows(
    s.h,
    `select 1 from outbox where realm_id = $1 and event_type = 'user.signed_in'
       and data ->> 'client_id' = 'web-app'`,
    [id],
  );
  assert.equal(signedIn.length, 0, 'no sign-in');
}

export const usersOf = (s: FederationSetup) =>
  count(s.h, 'select 1 from users where realm_id = $1', [s.realm.id]);

export { PASSWORD, REDIRECT };
