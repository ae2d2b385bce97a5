// Synchronous hooks at their points (docs/hooks.md): claims added to tokens, a dead hook in
// fail_open and in fail_closed, a registration refused, after_sign_in told, signatures a receiver
// can check, and the emergency control that turns a hook off.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { startHeadless } from '../../harness/signin-driver.ts';
import { count, REDIRECT } from '../../harness/signin-kit.ts';
import { codeFlow, oauthPost, signInForCode } from '../../harness/token-kit.ts';
import {
  answerWith,
  createHook,
  hookCalls,
  hookSetup,
  type Json,
  receiverUrl,
  signatureValid,
  startDeadServer,
} from './hooks-kit.ts';

describe('hooks › before_token_issuance', () => {
  test('case=claims are added to the access and ID tokens; protected claims stay the service’s', async (t) => {
    const s = await hookSetup(t);
    const hook = await createHook(s.admin, { kind: 'before_token_issuance', url: receiverUrl(s.receiver) });
    answerWith(s.receiver, {
      access_token: { tenant: 'acme', roles_ext: ['buyer'], sub: 'usr_evil', aud: 'elsewhere', cnf: {} },
      id_token: { plan: 'gold', iss: 'https://evil.example', nonce: 'forged' },
    });
    const res = await codeFlow(s.h, s.realm, s.creds, { start: { scope: 'openid profile', nonce: 'n-1' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));

    const jwks = createRemoteJWKSet(new URL(`${s.h.publicUrl}/realms/${s.realm.name}/jwks`));
    const issuer = `${s.h.ctx.config.server.publicOrigin}/realms/${s.realm.name}`;
    const at = await jwtVerify(res.body.access_token, jwks, { issuer, typ: 'at+jwt' });
    assert.equal(at.payload.tenant, 'acme');
    assert.deepEqual(at.payload.roles_ext, ['buyer']);
    assert.equal(at.payload.sub, s.user.id);
    assert.notEqual(at.payload.aud, 'elsewhere');
    assert.equal(at.payload.cnf, undefined);
    const id = await jwtVerify(res.body.id_token, jwks, { issuer, audience: 'web-app' });
    assert.equal(id.payload.plan, 'gold');
    assert.equal(id.payload.nonce, 'n-1');
    assert.equal(id.payload.tenant, undefined, 'access token claims stay in the access token');

    // What the hook was told, signed so that the receiver can check it with the secret it was given.
    const call = s.receiver.received.at(-1);
    assert.ok(call);
    assert.ok(signatureValid(String(hook.signing_secret), call.headers, call.body));
    assert.equal(
      signatureValid('whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=', call.headers, call.body),
      false,
    );
    const sent = JSON.parse(call.body) as Json;
    assert.equal(sent.type, 'before_token_issuance');
    assert.equal(sent.hook_id, hook.id);
    assert.deepEqual(
      { ...(sent.data as Json), scopes: undefined },
      {
        client_id: 'web-app',
        grant_type: 'authorization_code',
        user_id: s.user.id,
        scopes: undefined,
        org_id: null,
      },
    );
    assert.equal(await hookCalls(s, 'before_token_issuance', 'ok'), 1);

    // A refresh asks again: the new access token carries what the hook answers now.
    answerWith(s.receiver, { access_token: { tenant: 'acme-2' } });
    const refreshed = await oauthPost(
      s.h,
      s.realm,
      'token',
      { grant_type: 'refresh_token', refresh_token: res.body.refresh_token },
      s.creds,
    );
    assert.equal(refreshed.status, 200, JSON.stringify(refreshed.body));
    const again = await jwtVerify(refreshed.body.access_token, jwks, { issuer, typ: 'at+jwt' });
    assert.equal(again.payload.tenant, 'acme-2');
  });

  test('case=a dead hook in fail_open times out and tokens are issued without its claims', async (t) => {
    const s = await hookSetup(t);
    const dead = await startDeadServer(t);
    await createHook(s.admin, {
      kind: 'before_token_issuance',
      url: dead.url,
      timeout_ms: 300,
      failure_mode: 'fail_open',
    });
    const res = await codeFlow(s.h, s.realm, s.creds, { start: { scope: 'openid' } });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.ok(dead.connections() >= 1, 'the hook was called');
    assert.equal(await hookCalls(s, 'before_token_issuance', 'timeout'), 1);
  });

  test('case=a dead hook in fail_closed refuses with temporarily_unavailable; nothing is issued; disabling it by emergency control lets the same code through', async (t) => {
    const s = await hookSetup(t);
    const dead = await startDeadServer(t);
    const hook = await createHook(s.admin, {
      kind: 'before_token_issuance',
      url: dead.url,
      timeout_ms: 200,
      failure_mode: 'fail_closed',
    });
    const { code, verifier } = await signInForCode(s.h, s.realm, 'web-app');
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier };
    const refused = await oauthPost(s.h, s.realm, 'token', form, s.creds);
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.equal(refused.body.error, 'temporarily_unavailable');
    assert.equal(refused.body.access_token, undefined);
    const spent = `select 1 from authorization_codes
       where realm_id = $1 and client_id = 'web-app' and consumed_at is not null`;
    assert.equal(await count(s.h, spent, [s.realm.id]), 0, 'the code is not spent');
    assert.equal(await hookCalls(s, 'before_token_issuance', 'timeout'), 1);

    const control = await s.admin.call('POST', '/emergency/controls', {
      target_type: 'hook',
      target_id: hook.id,
      action: 'disable',
      reason: 'hook endpoint is down',
    });
    assert.equal(control.status, 200, await control.clone().text());
    const got = (await (await s.admin.call('GET', `/hooks/${hook.id}`)).json()) as Json;
    assert.equal(got.state, 'disabled');
    const issued = await oauthPost(s.h, s.realm, 'token', form, s.creds);
    assert.equal(issued.status, 200, JSON.stringify(issued.body));
    assert.equal(await hookCalls(s, 'before_token_issuance', 'timeout'), 1, 'a disabled hook is not called');
  });

  test('case=client_ids limits a hook to its clients', async (t) => {
    const s = await hookSetup(t);
    await createHook(s.admin, {
      kind: 'before_token_issuance',
      url: receiverUrl(s.receiver),
      client_ids: ['another-app'],
    });
    const res = await codeFlow(s.h, s.realm, s.creds);
    assert.equal(res.status, 200);
    assert.equal(s.receiver.received.length, 0);
  });
});

describe('hooks › before_registration and after_sign_in', () => {
  test('case=a denying hook refuses the registration; no account is created', async (t) => {
    const s = await hookSetup(t);
    await s.h.setPolicy(s.realm, { registration: { mode: 'open', require_email_verification: false } });
    await createHook(s.admin, { kind: 'before_registration', url: receiverUrl(s.receiver) });
    answerWith(s.receiver, { decision: 'deny', reason: 'sign-ups from this domain are closed' });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { intent: 'register' });
    const body = { email: 'new@example.com', password: 'a-long-password' };
    const refused = await tx.step('registration', body);
    assert.equal(refused.status, 403, JSON.stringify(refused.body));
    assert.equal(refused.body.detail, 'sign-ups from this domain are closed');
    const users = 'select 1 from user_identifiers where realm_id = $1 and value = $2';
    assert.equal(await count(s.h, users, [s.realm.id, 'new@example.com']), 0);
    const sent = JSON.parse(s.receiver.received.at(-1)?.body ?? '{}') as { data: Json };
    assert.equal(sent.data.email, 'new@example.com');
    assert.equal(await hookCalls(s, 'before_registration', 'denied'), 1);

    answerWith(s.receiver, { decision: 'allow' });
    const allowed = await tx.step('registration', body);
    assert.equal(allowed.status, 200, JSON.stringify(allowed.body));
    assert.equal(allowed.body.status, 'completed');
  });

  test('case=after_sign_in is told of a completed sign-in and its failure changes nothing', async (t) => {
    const s = await hookSetup(t);
    await createHook(s.admin, { kind: 'after_sign_in', url: receiverUrl(s.receiver) });
    s.receiver.answer = (_req, res) => {
      res.statusCode = 500;
      res.end();
    };
    const { code } = await signInForCode(s.h, s.realm, 'web-app');
    assert.ok(code);
    const sent = JSON.parse(s.receiver.received.at(-1)?.body ?? '{}') as { type: string; data: Json };
    assert.equal(sent.type, 'after_sign_in');
    assert.equal(sent.data.user_id, s.user.id);
    assert.deepEqual(sent.data.factors, ['pwd']);
    assert.equal(await hookCalls(s, 'after_sign_in', 'http_error'), 1);
  });
});
