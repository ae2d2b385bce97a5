// Authentication-flow rules (spec doc 1, policy authentication_flow, evaluation order 4;
// docs/security.md): ordered rules with conditions on client, organization, network, new device,
// account age and user attributes; outcomes allow, deny, require_mfa, require_phishing_resistant,
// challenge (verified by challenge_provider over HTTP, or answered with an emailed code) and review.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, type TestContext, test } from 'node:test';
import { codeIn, deliverQueued, startMailSink } from '../../harness/mail-kit.ts';
import {
  actionTypes,
  assertNothingIssued,
  audits,
  events,
  PASSWORD,
  passwordSignIn,
  REDIRECT,
  signinSetup,
} from '../../harness/signin-kit.ts';

const flow = (rules: unknown[], extra: Record<string, unknown> = {}) => ({
  authentication_flow: { rules, ...extra },
});

/** A CAPTCHA-style provider: only the response "human" is valid. */
async function provider(t: TestContext): Promise<{ url: string; calls: unknown[] }> {
  const calls: unknown[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      const parsed = JSON.parse(body) as { response?: string };
      calls.push(parsed);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ success: parsed.response === 'human' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/verify`, calls };
}

describe('sign-in › authentication-flow rules', () => {
  test('case=deny by client stops with authentication_policy_denied; first match wins/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    await h.createClient(realm, {
      clientId: 'other-app',
      name: 'Other',
      type: 'web',
      redirectUris: [REDIRECT],
    });
    await h.setPolicy(
      realm,
      flow([
        { conditions: { client_ids: ['other-app'] }, outcome: 'allow' },
        { conditions: { user_attributes: { email_domain: 'example.com' } }, outcome: 'deny' },
      ]),
    );
    const { state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.equal(state.body.status, 'pending');
    assert.equal(state.body.error, 'authentication_policy_denied');
    assert.deepEqual(state.body.next_actions, []);
    await assertNothingIssued(h, realm);
    const other = await passwordSignIn(h, realm.name, 'other-app', 'alice@example.com');
    assert.equal(other.state.body.status, 'completed', 'the earlier allow rule decides for other-app');
  });

  test('case=require_mfa by network range and by account age/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    await h.setPolicy(realm, flow([{ conditions: { networks: ['10.0.0.0/8'] }, outcome: 'require_mfa' }]));
    assert.equal(
      (await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com')).state.body.status,
      'completed',
    );
    await h.setPolicy(
      realm,
      flow([{ conditions: { networks: ['127.0.0.0/8', '::1/128'] }, outcome: 'require_mfa' }]),
    );
    const local = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.deepEqual(actionTypes(local.state.body), ['enroll_totp', 'enroll_webauthn']);
    await h.setPolicy(
      realm,
      flow([{ conditions: { account_age_max_days: 1, new_device: true }, outcome: 'require_mfa' }]),
    );
    const young = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.deepEqual(actionTypes(young.state.body), ['enroll_totp', 'enroll_webauthn']);
    await h.setPolicy(
      realm,
      flow([{ conditions: { account_age_min_days: 30 }, outcome: 'require_phishing_resistant' }]),
    );
    assert.equal(
      (await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com')).state.body.status,
      'completed',
    );
    await h.setPolicy(realm, flow([{ outcome: 'require_phishing_resistant' }]));
    const strict = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.deepEqual(actionTypes(strict.state.body), ['enroll_webauthn'], 'only a passkey meets the profile');
  });

  test('case=challenge answered through the provider; exactly one of provider_response or code/mode=headless', async (t) => {
    // The provider listens on loopback: reachable only because the operator allowlists it.
    const p = await provider(t);
    const { h, realm } = await signinSetup(t, {
      overrides: {
        'delivery.egress_allowlist': '127.0.0.1/32',
        'security.challenge_providers': `captcha=${p.url}`,
        'security.challenge_provider_secret': 's3cret',
      },
    });
    await h.setPolicy(realm, flow([{ outcome: 'challenge' }], { challenge_provider: 'captcha' }));
    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.deepEqual(actionTypes(state.body), ['challenge']);
    assert.equal((await tx.step('challenge', {})).status, 400);
    assert.equal((await tx.step('challenge', { provider_response: 'human', code: '123456' })).status, 400);
    assert.equal((await tx.step('challenge', { code: '123456' })).status, 409);
    assert.equal((await tx.step('challenge/send', {})).status, 409, 'no emailed-code alternative');
    const robot = await tx.step('challenge', { provider_response: 'robot' });
    assert.equal(robot.status, 200);
    assert.equal(robot.body.status, 'pending');
    assert.deepEqual(actionTypes(robot.body), ['challenge']);
    const human = await tx.step('challenge', { provider_response: 'human' });
    assert.equal(human.body.status, 'completed', JSON.stringify(human.body));
    assert.deepEqual(p.calls.at(-1), { response: 'human', secret: 's3cret' });
  });

  test('case=emailed-code alternative: challenge/send mails a code, challenge {code} passes; a wrong code is a failed proof/mode=headless', async (t) => {
    const mail = await startMailSink(t);
    const { h, realm } = await signinSetup(t, { overrides: mail.overrides });
    // No provider: the alternative alone lets a challenge rule stand.
    await h.setPolicy(realm, flow([{ outcome: 'challenge' }], { email_code_alternative: true }));
    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.deepEqual(state.body.next_actions, [
      {
        type: 'challenge',
        required: true,
        fields: ['provider_response', 'code'],
        options: { email_code: true },
      },
    ]);
    assert.equal((await tx.step('challenge', { code: '123456' })).body.status, 'pending', 'no code sent yet');

    const sent = await tx.step('challenge/send', {});
    assert.equal(sent.status, 200, JSON.stringify(sent.body));
    assert.deepEqual(await deliverQueued(h), { sent: 1 });
    const code = codeIn(await mail.waitFor('alice@example.com', 1, realm.display_name));
    const wrong = await tx.step('challenge', { code: code === '000000' ? '111111' : '000000' });
    assert.equal(wrong.status, 200);
    assert.equal(wrong.body.status, 'pending');
    assert.deepEqual(actionTypes(wrong.body), ['challenge']);
    const failed = await audits(h, realm, 'signin.proof_failed');
    assert.deepEqual(
      failed.map((r) => (r.data as { factor: string }).factor),
      ['challenge', 'challenge'],
    );

    const done = await tx.step('challenge', { code });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    // A code belongs to its transaction: another sign-in cannot use it.
    const again = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.equal((await again.tx.step('challenge', { code })).body.status, 'pending');
  });

  test('case=emailed-code alternative without a mail transport: challenge/send answers 503/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    await h.setPolicy(realm, flow([{ outcome: 'challenge' }], { email_code_alternative: true }));
    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    assert.equal(state.body.next_actions[0].options, undefined, 'the alternative is not offered');
    assert.equal((await tx.step('challenge/send', {})).status, 503);
  });

  test('case=a provider the egress guard refuses fails closed: the challenge is not passed/mode=headless', async (t) => {
    const p = await provider(t);
    const { h, realm } = await signinSetup(t, {
      overrides: { 'security.challenge_providers': `captcha=${p.url}` },
    });
    await h.setPolicy(realm, flow([{ outcome: 'challenge' }], { challenge_provider: 'captcha' }));
    const { tx } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com');
    const refused = await tx.step('challenge', { provider_response: 'human' });
    assert.equal(refused.status, 200);
    assert.equal(refused.body.status, 'pending');
    assert.deepEqual(actionTypes(refused.body), ['challenge']);
    assert.equal(p.calls.length, 0, 'nothing was sent to a loopback address');
  });

  test('case=review completes and records the authentication_review signal once/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t);
    await h.setPolicy(realm, flow([{ conditions: { client_ids: ['web-app'] }, outcome: 'review' }]));
    const { state } = await passwordSignIn(h, realm.name, 'web-app', 'alice@example.com', PASSWORD);
    assert.equal(state.body.status, 'completed');
    const reviewed = await audits(h, realm, 'signin.authentication_review');
    assert.equal(reviewed.length, 1);
    assert.equal(reviewed[0]?.signal, 'authentication_review');
    const alerts = await events(h, realm, 'security.alert');
    assert.ok(alerts.some((e) => JSON.stringify(e).includes('authentication_review')));
  });
});
