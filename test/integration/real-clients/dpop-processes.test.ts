// Single use of DPoP proofs across real processes (RFC 9449 section 11.1; spec doc 1,
// Authentication 8): two `proudauth serve` processes on one PostgreSQL database behind one public
// origin, as a deployment with a load balancer runs them. oauth4webapi talks to one process or the
// other; a proof it sent to one is then replayed, unchanged, at the other, and must be refused
// there with nothing issued or answered. The test's own harness only seeds the database (and signs
// in the administrator) on the same database.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt } from 'jose';
import * as oauth from 'oauth4webapi';
import { adminAudience } from '../../../src/kernel/audiences.ts';
import { assignRoles, cliSignIn } from '../../harness/api-kit.ts';
import { dpopKey } from '../../harness/dpop-kit.ts';
import { json } from '../../harness/signin-driver.ts';
import { TEST_DATABASE_URL } from '../../harness/test-db.ts';
import { seedGrant, seedResource, seedServiceClient, tokensIssuedIn } from '../../harness/token-kit.ts';
import { Background } from '../cli/cli-process.ts';
import { databaseUrlOf, drillEnv, serveUrls } from '../faults/drill-kit.ts';
import { PASSWORD, REDIRECT, type RpSetup, rpSetup, webSignIn } from './rp-kit.ts';

const SKIP = TEST_DATABASE_URL
  ? false
  : 'two serve processes share one database, and the embedded database (PGlite) belongs to one process; runs with PROUDAUTH_TEST_DATABASE_URL';

const OPAQUE = 'https://opaque.example.com';

type Fetch = (url: string, init: RequestInit) => Promise<Response>;
type Http = { [oauth.allowInsecureRequests]: true; [oauth.customFetch]: Fetch };

interface Process {
  name: string;
  publicUrl: string;
  internalUrl: string;
}

test('DPoP proofs are single use across two serve processes on one PostgreSQL', {
  skip: SKIP,
  timeout: 300_000,
}, async (t) => {
  const s = await rpSetup(t);
  const origin = s.h.publicUrl;
  const svc = await seedServiceClient(s.h, s.realm, 'billing');
  const opaque = await seedResource(s.h, s.realm, {
    audience: OPAQUE,
    scopes: ['orders:read'],
    tokenFormat: 'opaque',
  });
  await seedGrant(s.h, s.realm, svc.client, opaque, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });

  // Both processes serve the harness's public origin, so a proof's htu is right at either.
  const env = drillEnv(s, await databaseUrlOf(s.h.ctx.db));
  const serves = [new Background('proudauth', ['serve'], env), new Background('proudauth', ['serve'], env)];
  t.after(() => {
    for (const p of serves) p.kill();
  });
  const [a, b] = (await Promise.all(
    serves.map(async (p, i): Promise<Process> => ({ name: i === 0 ? 'A' : 'B', ...(await serveUrls(p)) })),
  )) as [Process, Process];

  /** Every DPoP header sent through `to`, in order. */
  const sent: string[] = [];
  /** Sends what is addressed to the public origin to process `p`, as a load balancer would. */
  const to =
    (p: Process, replay?: string): Fetch =>
    (url, init) => {
      assert.ok(url.startsWith(origin), url);
      const headers = new Headers(init.headers);
      if (replay !== undefined) headers.set('dpop', replay);
      const proof = headers.get('dpop');
      if (proof !== null) sent.push(proof);
      return fetch(`${p.publicUrl}${url.slice(origin.length)}`, { ...init, headers });
    };
  const lastProof = () => {
    const proof = sent.at(-1);
    assert.ok(proof, 'the library sent a proof');
    return proof;
  };
  const http = (p: Process, replay?: string): Http => ({
    [oauth.allowInsecureRequests]: true,
    [oauth.customFetch]: to(p, replay),
  });
  const issuedAt = async (p: Process) =>
    tokensIssuedIn(await (await fetch(`${p.internalUrl}/metrics`)).text());
  const opaqueRows = async () =>
    (await s.h.ctx.db.query('select 1 from opaque_access_tokens where realm_id = $1', [s.realm.id])).rowCount;

  const issuer = new URL(s.issuer);
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, http(a)));

  await t.test(
    'token endpoint: a proof accepted by one process is refused by the other, nothing issued',
    async () => {
      const client: oauth.Client = { client_id: 'billing' };
      const auth = oauth.ClientSecretBasic(svc.creds.secret);
      const dpop = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
      const ask = (p: Process, replay?: string) =>
        oauth.clientCredentialsGrantRequest(as, client, auth, new URLSearchParams({ resource: OPAQUE }), {
          ...http(p, replay),
          DPoP: dpop,
        });
      for (const [first, second] of [
        [a, b],
        [b, a],
      ] as const) {
        const tokens = await oauth.processClientCredentialsResponse(as, client, await ask(first));
        assert.equal(tokens.token_type, 'dpop', `${first.name} issued a bound token`);
        const proof = lastProof();
        const [issued, rows] = [await issuedAt(second), await opaqueRows()];
        const replayed = await json(await ask(second, proof));
        assert.deepEqual(
          [replayed.status, replayed.body.error],
          [400, 'invalid_dpop_proof'],
          `${first.name}'s proof replayed at ${second.name}`,
        );
        assert.equal(replayed.body.access_token, undefined, 'nothing issued');
        assert.equal(await issuedAt(second), issued, `${second.name} issued nothing`);
        assert.equal(await opaqueRows(), rows, 'no token stored');
        // A fresh proof of the same key passes there: the refusal was the replay.
        const fresh = await oauth.processClientCredentialsResponse(as, client, await ask(second));
        assert.equal(fresh.token_type, 'dpop');
        assert.notEqual(lastProof(), proof);
        assert.equal(await issuedAt(second), issued + 1, 'the metric counts what the process issues');
      }
    },
  );

  await t.test(
    'UserInfo: a proof used at one process is refused at the other, nothing answered',
    async () => {
      const { token, dpop, client } = await boundUserToken(s, as, a, http(a));
      const info = (p: Process, replay?: string) =>
        oauth.userInfoRequest(as, client, token, { ...http(p, replay), DPoP: dpop });
      const here = await oauth.processUserInfoResponse(as, client, oauth.skipSubjectCheck, await info(a));
      assert.equal(here.sub, s.user.id);
      const proof = lastProof();
      const there = await json(await info(b, proof));
      assert.equal(there.status, 401);
      assert.match(there.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_dpop_proof"/);
      assert.equal(there.body?.sub, undefined, 'no claims answered');
      // A fresh proof at the other process passes, and its replay at the first is refused.
      const fresh = await oauth.processUserInfoResponse(as, client, oauth.skipSubjectCheck, await info(b));
      assert.equal(fresh.sub, s.user.id);
      const back = await json(await info(a, lastProof()));
      assert.equal(back.status, 401);
      assert.equal(back.body?.sub, undefined);
    },
  );

  await t.test('administration API: a proof used at one process is refused at the other', async () => {
    await assignRoles(s.h, s.realm, s.user.id, ['realm-admin']);
    const key = await dpopKey('ES256');
    const { accessToken } = await cliSignIn(
      s.h,
      s.realm,
      { id: s.user.id, email: 'alice@example.com', password: PASSWORD },
      { resources: [adminAudience(origin, s.realm.name)], dpopProof: (url) => key.proof({ url }) },
    );
    assert.deepEqual(decodeJwt(accessToken).cnf, { jkt: key.jkt });
    const path = `/api/v1/realms/${s.realm.name}/users`;
    const proof = await key.proof({ method: 'GET', url: `${origin}${path}`, accessToken });
    const call = (p: Process) =>
      fetch(`${p.publicUrl}${path}`, { headers: { authorization: `DPoP ${accessToken}`, dpop: proof } });
    const first = await call(a);
    assert.equal(first.status, 200, await first.clone().text());
    await first.arrayBuffer();
    const replayed = await json(await call(b));
    assert.equal(replayed.status, 401);
    assert.match(replayed.headers.get('www-authenticate') ?? '', /^DPoP error="invalid_dpop_proof"/);
    assert.equal(replayed.body?.items, undefined, 'no users listed');
  });

  await t.test('no process logged a fatal or unhandled error', () => {
    for (const p of serves) {
      assert.ok(p.running, p.stderr);
      assert.doesNotMatch(p.stdout + p.stderr, /"level":60|unhandled error|Unhandled 'error' event/);
    }
  });
});

/** The web client's code flow through oauth4webapi at process `p`, ending in a DPoP-bound token. */
async function boundUserToken(s: RpSetup, as: oauth.AuthorizationServer, p: Process, http: Http) {
  // The sign-in, through the transaction API of the same process.
  const atP = {
    publicUrl: s.h.publicUrl,
    get: (path: string, init?: RequestInit) => fetch(`${p.publicUrl}${path}`, init),
  };
  const { client, callback, verifier } = await webSignIn(s, as, 'openid profile', atP);
  const dpop = oauth.DPoP(client, await oauth.generateKeyPair('ES256'));
  const response = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.ClientSecretBasic(s.secret),
    callback,
    REDIRECT,
    verifier,
    { ...http, DPoP: dpop },
  );
  const tokens = await oauth.processAuthorizationCodeResponse(as, client, response);
  assert.equal(tokens.token_type, 'dpop');
  assert.deepEqual(decodeJwt(tokens.access_token).cnf, { jkt: await dpop.calculateThumbprint() });
  return { token: tokens.access_token, dpop, client };
}
