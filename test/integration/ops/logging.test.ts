// What the service logs (docs/operations.md, Logging): one line per request with the route
// pattern, sign-in and token outcomes with reason codes, and never a credential or an email.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { createLogger } from '../../../src/platform/log.ts';
import { startHarness } from '../../harness/harness.ts';
import { json, startHeadless } from '../../harness/signin-driver.ts';
import { codeOf, PASSWORD, parseSetCookies, REDIRECT, startBrowser } from '../../harness/signin-kit.ts';
import { clientSecret, oauthPost } from '../../harness/token-kit.ts';

type Line = Record<string, unknown>;

function capture(level = 'debug') {
  const chunks: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      chunks.push(chunk.toString());
      done();
    },
  });
  return {
    log: createLogger(level, sink),
    text: () => chunks.join(''),
    lines: (): Line[] =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Line),
  };
}

const EMAIL = 'log.subject@example.com';

async function setup(t: Parameters<typeof startHarness>[0]) {
  const out = capture();
  const h = await startHarness(t, { log: out.log });
  const realm = await h.createRealm();
  await h.setPolicy(realm, { interaction: { login_ui_url: 'https://login.example.net/' } });
  const client = await h.createClient(realm, {
    clientId: 'web-app',
    name: 'Web App',
    type: 'web',
    redirectUris: [REDIRECT],
  });
  await h.createUser(realm, { email: EMAIL, password: PASSWORD });
  const secret = await clientSecret(h, realm, client);
  return { out, h, realm, secret };
}

describe('ops › logging', () => {
  test('case=a sign-in and token requests log outcomes and never a secret, token, cookie or email', async (t) => {
    const { out, h, realm, secret } = await setup(t);
    const seen: string[] = [secret, PASSWORD, EMAIL, 'wrong-password-77'];

    // Browser mode: cookie, Origin and CSRF token; one wrong password, then the right one.
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    seen.push(tx.cookie, tx.verifier, await tx.csrf());
    assert.equal((await tx.step('identify', { identifier: EMAIL })).status, 200);
    const wrong = await tx.step('password', { password: 'wrong-password-77' });
    assert.equal(wrong.status, 200);
    const done = await tx.step('password', { password: PASSWORD });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    const sid = parseSetCookies(done.headers).find((c) => c.name === 'pa_sid');
    assert.ok(sid, 'the completed sign-in set a session cookie');
    seen.push(sid.value);
    const code = codeOf(done.body.redirect_to);
    seen.push(code);

    const tokens = await oauthPost(
      h,
      realm,
      'token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: tx.verifier },
      { clientId: 'web-app', secret },
    );
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    for (const k of ['access_token', 'refresh_token', 'id_token']) {
      if (typeof tokens.body[k] === 'string') seen.push(tokens.body[k]);
    }
    // The same code again: refused, with its error code in the log.
    const replay = await oauthPost(
      h,
      realm,
      'token',
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: tx.verifier },
      { clientId: 'web-app', secret },
    );
    assert.equal(replay.body.error, 'invalid_grant');
    // A wrong client secret.
    assert.equal(
      (
        await oauthPost(
          h,
          realm,
          'token',
          { grant_type: 'client_credentials' },
          { clientId: 'web-app', secret: 'not-the-secret-123' },
        )
      ).body.error,
      'invalid_client',
    );
    seen.push('not-the-secret-123');

    // Headless mode: the continuation token travels in a header.
    const headless = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    seen.push(headless.token);
    await headless.step('identify', { identifier: EMAIL });

    // A token in a query string and in an Authorization header, and an email in a path.
    const queryToken = 'query-token-abcdef0123456789';
    seen.push(queryToken);
    await h.get(`/realms/${realm.name}/jwks?access_token=${queryToken}`);
    await h.get(`/realms/${realm.name}/oauth/userinfo`, {
      headers: { authorization: `Bearer ${tokens.body.access_token}` },
    });
    await h.get('/realms/someone@example.org/jwks');
    seen.push('someone@example.org');

    const text = out.text();
    for (const s of seen) assert.ok(!text.includes(s), `the log must not contain ${s.slice(0, 12)}...`);
    assert.doesNotMatch(text, /example\.(com|org)/, 'no email address in the log');
    assert.doesNotMatch(text, /pa_tx=|pa_sid=|Bearer /);

    const lines = out.lines();
    const requests = lines.filter((l) => l.msg === 'request');
    const passwordSteps = requests.filter(
      (l) => l.route === '/api/v1/realms/:realm/auth/transactions/:id/password',
    );
    assert.equal(passwordSteps.length, 2);
    for (const l of passwordSteps) {
      assert.equal(l.realm, realm.name);
      assert.equal(l.method, 'POST');
      assert.equal(l.status, 200);
      assert.equal(typeof l.duration_ms, 'number');
      assert.equal(typeof l.request_id, 'string');
    }
    const jwks = requests.find((l) => l.route === '/realms/:realm/jwks' && l.realm === realm.name);
    assert.ok(jwks, 'the jwks request is logged by its route pattern');
    assert.ok(
      requests.some((l) => l.route === '/realms/:realm/jwks' && l.realm === undefined && l.status === 404),
      'a realm segment that is not a realm name is left out',
    );

    const failed = lines.find((l) => l.msg === 'sign-in step failed');
    assert.ok(failed, 'the wrong password is logged');
    assert.equal(failed.reason, 'proof_failed');
    assert.equal(failed.step, 'password');
    assert.equal(failed.level, 40);
    const completed = lines.find((l) => l.msg === 'sign-in completed');
    assert.ok(completed);
    assert.equal(completed.realm, realm.name);
    assert.equal(completed.client_id, 'web-app');
    assert.equal(completed.transaction_id, tx.id);
    // The step's request id ties the outcome to its request line.
    assert.ok(
      requests.some((l) => l.request_id === completed.request_id && l.route === passwordSteps[0]?.route),
    );

    const issued = lines.filter((l) => l.msg === 'token issued');
    assert.deepEqual(
      issued.map((l) => [l.grant_type, l.client_id, l.outcome]),
      [['authorization_code', 'web-app', 'success']],
    );
    const refused = lines.filter((l) => l.msg === 'token request refused');
    assert.deepEqual(
      refused.map((l) => [l.grant_type, l.error]),
      [
        ['authorization_code', 'invalid_grant'],
        ['client_credentials', 'invalid_client'],
      ],
    );
    assert.ok(refused.every((l) => l.level === 40 && l.realm === realm.name));
  });

  test('case=a step refused with a problem logs its problem code', async (t) => {
    const { out, h, realm } = await setup(t);
    const tx = await startBrowser(h, realm.name, 'web-app', REDIRECT);
    // Without the CSRF token the binding refuses the step.
    const r = await tx.step('identify', { identifier: EMAIL }, { 'x-csrf-token': null });
    assert.equal(r.status, 403);
    const refused = out.lines().find((l) => l.msg === 'sign-in step refused');
    assert.ok(refused);
    assert.equal(refused.reason, r.body.code);
    assert.equal(refused.status, 403);
    assert.equal(refused.step, 'identify');
    assert.ok(!out.text().includes(EMAIL));
  });

  test('case=probe and scrape successes log at debug, everything else at info', async (t) => {
    const out = capture('info');
    const h = await startHarness(t, { log: out.log });
    assert.equal((await h.get('/health/live')).status, 200);
    assert.equal((await h.internal('/metrics')).status, 200);
    assert.equal((await json(await h.get('/no/such/path'))).status, 404);
    const routes = out
      .lines()
      .filter((l) => l.msg === 'request')
      .map((l) => [l.route, l.status]);
    assert.deepEqual(routes, [['unmatched', 404]]);
  });
});
