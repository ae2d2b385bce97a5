// Token exchange and the decision API take a subject token without any proof of possession, so
// they refuse a DPoP-bound token (JWT or opaque) as ordinary bearer verification does (spec doc 1,
// Authentication 8). The same user's bearer tokens pass, so each refusal is the cnf's doing; a
// refused exchange issues nothing.
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { decodeJwt } from 'jose';
import { issuerOf } from '../../../src/kernel/audiences.ts';
import { ACCESS_TOKEN_TYPE } from '../../../src/oauth/grants/grant-context.ts';
import { TOKEN_EXCHANGE as EXCHANGE } from '../../../src/oauth/grants/token-exchange.grant.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { dpopKey } from '../../harness/dpop-kit.ts';
import { signinSetup } from '../../harness/signin-kit.ts';
import {
  clientSecret,
  oauthPost,
  seedGrant,
  seedResource,
  seedServiceClient,
  signInForCode,
  tokensIssued,
} from '../../harness/token-kit.ts';
import { checkBody } from '../decisions/decision-kit.ts';

const PLAIN = 'https://plain.example.com';
const OPAQUE = 'https://opaque.example.com';
const INVENTORY = 'https://inventory.example.com';
const REDIRECT = 'https://app.example.com/callback';

async function setup(t: TestContext) {
  const { h, realm, client } = await signinSetup(t);
  const creds = { clientId: 'web-app', secret: await clientSecret(h, realm, client) };
  const plain = await seedResource(h, realm, { audience: PLAIN, scopes: ['plain:read'] });
  const opaque = await seedResource(h, realm, {
    audience: OPAQUE,
    scopes: ['plain:read'],
    tokenFormat: 'opaque',
  });
  await seedGrant(h, realm, client, plain, { scopes: ['plain:read'] });
  await seedGrant(h, realm, client, opaque, { scopes: ['plain:read'] });
  const inventory = await seedResource(h, realm, { audience: INVENTORY, scopes: ['stock:read'] });
  const svc = await seedServiceClient(h, realm, 'inventory-worker', [EXCHANGE]);
  await seedGrant(h, realm, svc.client, inventory, {
    scopes: ['stock:read'],
    exchange: { acceptFrom: [PLAIN, OPAQUE], maxScopes: ['stock:read'] },
  });
  const decider = await apiCaller(h, realm, { roles: ['resource-server'] });
  const tokenUrl = `${issuerOf(h.ctx.config.server.publicOrigin, realm.name)}/oauth/token`;

  /** A user token for the resource, bound to a fresh DPoP key when `dpop`. */
  const userToken = async (resource: string, dpop: boolean) => {
    const { code, verifier } = await signInForCode(h, realm, 'web-app', {
      start: { scope: 'openid plain:read', resource: [resource] },
    });
    const key = await dpopKey();
    const r = await oauthPost(
      h,
      realm,
      'token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      creds,
      dpop ? { dpop: await key.proof({ url: tokenUrl }) } : {},
    );
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.token_type, dpop ? 'DPoP' : 'Bearer');
    return r.body.access_token as string;
  };
  const exchange = (subject: string) =>
    oauthPost(
      h,
      realm,
      'token',
      {
        grant_type: EXCHANGE,
        subject_token: subject,
        subject_token_type: ACCESS_TOKEN_TYPE,
        resource: INVENTORY,
      },
      svc.creds,
    );
  const decide = async (token: string) => {
    const res = await decider.call('POST', '/authorization/check', checkBody(token, 'documents.read'));
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  return { h, realm, userToken, exchange, decide };
}

for (const [kind, resource] of [
  ['JWT', PLAIN],
  ['opaque', OPAQUE],
] as const) {
  test(`token exchange refuses a DPoP-bound ${kind} subject token and issues nothing`, async (t) => {
    const s = await setup(t);
    const bearer = await s.userToken(resource, false);
    assert.equal((await s.exchange(bearer)).status, 200);

    const bound = await s.userToken(resource, true);
    if (kind === 'JWT') assert.ok(decodeJwt(bound).cnf);
    const before = await tokensIssued(s.h);
    const r = await s.exchange(bound);
    assert.equal(r.status, 400, JSON.stringify(r.body));
    assert.equal(r.body.error, 'invalid_grant');
    assert.equal(await tokensIssued(s.h), before);
  });

  test(`the decision API treats a DPoP-bound ${kind} subject token as no token`, async (t) => {
    const s = await setup(t);
    const bearer = await s.decide(await s.userToken(resource, false));
    const bound = await s.decide(await s.userToken(resource, true));
    assert.equal(bearer.status, 200);
    assert.equal(bound.status, 200);
    assert.notEqual(bearer.body.reason_code, 'SUBJECT_TOKEN_INACTIVE', JSON.stringify(bearer.body));
    assert.equal(bound.body.allowed, false);
    assert.equal(bound.body.reason_code, 'SUBJECT_TOKEN_INACTIVE', JSON.stringify(bound.body));
  });
}
