// The verifier package with DPoP-bound tokens from a running server (RFC 9449 section 7): the
// offline and introspection verifiers take a key-bound token only with a fresh proof of its key for
// the request, once; without a proof, with another key's proof or a replayed one it is refused.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeJwt } from 'jose';
import {
  introspectionVerifier,
  offlineVerifier,
  VerificationError,
} from '../../../packages/verifier/src/index.ts';
import { CLI_CLIENT_ID } from '../../../src/clients/builtin-clients.ts';
import { CLI_REDIRECT } from '../../harness/api-kit.ts';
import { dpopKey } from '../../harness/dpop-kit.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import { codeOf, PASSWORD } from '../../harness/signin-kit.ts';
import { AUDIENCE, type VerifierKit, verifierKit } from './verifier-kit.ts';

const code = (c: string) => (e: unknown) => e instanceof VerificationError && e.code === c;
const API = `${AUDIENCE}/orders/7`;

/** A user's access token for AUDIENCE from the CLI client, bound to `key` through its code redemption. */
async function boundToken(k: VerifierKit, key: Awaited<ReturnType<typeof dpopKey>>) {
  const email = `dpop-${Math.random().toString(36).slice(2, 10)}@example.com`;
  await k.h.createUser(k.realm, { email, password: PASSWORD });
  const tx = await startHeadless(k.h, k.realm.name, CLI_CLIENT_ID, CLI_REDIRECT, { resource: [AUDIENCE] });
  await tx.step('identify', { identifier: email });
  const done = await tx.step('password', { password: PASSWORD });
  assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
  const tokenUrl = `${k.issuer}/oauth/token`;
  const r = await fetch(tokenUrl, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      dpop: await key.proof({ url: tokenUrl }),
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      client_id: CLI_CLIENT_ID,
      code: codeOf(done.body.redirect_to),
      redirect_uri: CLI_REDIRECT,
      code_verifier: tx.verifier,
      resource: AUDIENCE,
    }),
  });
  const body = (await r.json()) as { access_token: string; token_type: string };
  assert.equal(body.token_type, 'DPoP');
  return body.access_token;
}

describe('verifier › DPoP against a running server', () => {
  test('case=offline and introspection verifiers take a bound token only with a fresh proof of its key', async (t) => {
    const k = await verifierKit(t);
    const key = await dpopKey();
    const other = await dpopKey();
    const token = await boundToken(k, key);
    assert.deepEqual(decodeJwt(token).cnf, { jkt: key.jkt });
    const request = async (signer = key) => ({
      proof: await signer.proof({ method: 'GET', url: API, accessToken: token }),
      method: 'GET',
      url: API,
    });

    const offline = offlineVerifier({ issuer: k.issuer, audience: AUDIENCE });
    const online = introspectionVerifier({
      issuer: k.issuer,
      audience: AUDIENCE,
      clientId: k.introspector.clientId,
      clientSecret: k.introspector.secret,
    });
    for (const v of [offline, online]) {
      const once = await request();
      assert.equal((await v.verify(token, once)).claims.client_id, CLI_CLIENT_ID);
      await assert.rejects(v.verify(token, once), code('invalid_dpop_proof'), 'a replayed proof');
      await assert.rejects(v.verify(token), code('invalid_token'), 'no proof: the bearer path');
      await assert.rejects(v.verify(token, await request(other)), code('invalid_dpop_proof'));
      await assert.rejects(
        v.verify(token, { ...(await request()), url: `${AUDIENCE}/orders/8` }),
        code('invalid_dpop_proof'),
      );
    }
    // An unbound token presented with the DPoP scheme is refused too.
    const bearer = await k.subject();
    const proof = await key.proof({ method: 'GET', url: API, accessToken: bearer.token });
    await assert.rejects(
      offline.verify(bearer.token, { proof, method: 'GET', url: API }),
      code('invalid_token'),
    );
    assert.equal((await offline.verify(bearer.token)).claims.sub, bearer.userId);
  });
});
