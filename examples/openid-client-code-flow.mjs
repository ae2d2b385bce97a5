// A relying party built on openid-client (an independent, certified OpenID Connect library)
// completing the authorization code flow with PKCE against ProudAuth. ProudAuth serves no login
// pages, so where a browser app would show its login UI, this script answers the sign-in
// transaction headlessly (docs/signin.md). Usage (see README, "Registering a client"):
//   ISSUER=http://localhost:8080/realms/main CLIENT_ID=shop CLIENT_SECRET=pa_cs_... \
//   EMAIL=alice@example.com PASSWORD=... node examples/openid-client-code-flow.mjs
import * as client from 'openid-client';

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`set ${name}`);
  return v;
};
const issuer = new URL(env('ISSUER'));
const redirectUri = process.env.REDIRECT_URI ?? 'http://localhost:3000/callback';
const resource = process.env.RESOURCE ?? 'https://orders.example.com';

// The client was registered with client_secret_basic, the default of the clients API.
const config = await client.discovery(
  issuer,
  env('CLIENT_ID'),
  undefined,
  client.ClientSecretBasic(env('CLIENT_SECRET')),
  {
    execute: issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [],
  },
);

// 1. The authorization request, built by the library.
const verifier = client.randomPKCECodeVerifier();
const state = client.randomState();
const nonce = client.randomNonce();
const authUrl = client.buildAuthorizationUrl(config, {
  redirect_uri: redirectUri,
  scope: 'openid profile orders:read',
  resource,
  code_challenge: await client.calculatePKCECodeChallenge(verifier),
  code_challenge_method: 'S256',
  state,
  nonce,
});

// 2. The sign-in, answered headlessly with the same parameters.
const realmPath = issuer.pathname.replace(/^\/realms\//, '');
const api = `${issuer.origin}/api/v1/realms/${realmPath}/auth/transactions`;
const q = authUrl.searchParams;
const post = async (url, body, token) => {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { 'x-transaction-token': token } : {}) },
    body: JSON.stringify(body),
  });
  const json = await res.json();
  if (!res.ok) throw new Error(`${url}: ${res.status} ${JSON.stringify(json)}`);
  return json;
};
const started = await post(api, {
  client_id: q.get('client_id'),
  redirect_uri: q.get('redirect_uri'),
  scope: q.get('scope'),
  resource: q.getAll('resource'),
  state: q.get('state'),
  nonce: q.get('nonce'),
  code_challenge: q.get('code_challenge'),
  code_challenge_method: q.get('code_challenge_method'),
});
const tx = `${api}/${started.transaction_id}`;
await post(`${tx}/identify`, { identifier: env('EMAIL') }, started.continuation_token);
const done = await post(`${tx}/password`, { password: env('PASSWORD') }, started.continuation_token);
if (done.status !== 'completed')
  throw new Error(`the sign-in needs more: ${JSON.stringify(done.next_actions)}`);

// 3. The callback, validated (state, iss) and redeemed by the library; the ID token is checked.
const tokens = await client.authorizationCodeGrant(config, new URL(done.redirect_to), {
  pkceCodeVerifier: verifier,
  expectedState: state,
  expectedNonce: nonce,
});
const claims = tokens.claims();
console.log(
  JSON.stringify(
    {
      id_token_subject: claims.sub,
      access_token_for: resource,
      scope: tokens.scope,
      expires_in: tokens.expires_in,
      refresh_token: tokens.refresh_token ? 'received' : 'none',
    },
    null,
    2,
  ),
);

// 4. A refresh, and the user's profile from UserInfo with a token for UserInfo.
const userinfoToken = await client.refreshTokenGrant(config, tokens.refresh_token, {
  resource: `${issuer.href}/oauth/userinfo`,
});
console.log(
  JSON.stringify(await client.fetchUserInfo(config, userinfoToken.access_token, claims.sub), null, 2),
);
