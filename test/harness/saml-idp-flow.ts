// The SAML identity provider tests' shared steps (docs/saml-idp.md): a realm with a SAML client
// for samlify, a browser sign-in with password and TOTP, and the HTTP-POST form of the answer.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { RealmRow } from '../../src/realms/index.ts';
import { apiCaller } from './api-kit.ts';
import type { Harness } from './harness.ts';
import { ACS, SP_ENTITY, samlPeers } from './saml-sp.ts';
import { json } from './signin-driver.ts';
import {
  enrollTotp,
  type MovableClock,
  movableClock,
  nextTotpStep,
  PASSWORD,
  parseSetCookies,
  signinSetup,
  totpCode,
} from './signin-kit.ts';

export interface Setup {
  h: Harness;
  realm: RealmRow;
  clock: MovableClock;
  /** alice@example.com, who signs in. */
  userId: string;
  secret: string;
  idpMetadata: string;
}

export async function setup(t: TestContext, saml: Record<string, unknown> = {}): Promise<Setup> {
  const { h, realm, clock, user } = await signinSetup(t, {
    clock: movableClock(),
    loginUi: 'https://login.example.com/',
  });
  const { secret } = await enrollTotp(h, realm, 'web-app', 'alice@example.com', clock);
  await h.ctx.db.query(`update users set display_name = 'Alice Example' where realm_id = $1`, [realm.id]);
  const admin = await apiCaller(h, realm);
  const created = await admin.call('POST', '/clients', {
    client_id: 'sp-app',
    name: 'SAML App',
    type: 'saml',
    token_policy: { require_mfa: true },
    saml: { entity_id: SP_ENTITY, acs_urls: [ACS], attributes: ['email', 'name'], ...saml },
  });
  assert.equal(created.status, 201, await created.clone().text());
  const { body } = await json(created);
  assert.equal(body.type, 'saml');
  assert.deepEqual(body.redirect_uris, []);
  assert.equal(body.saml.entity_id, SP_ENTITY);
  const meta = await h.get(`/realms/${realm.name}/saml/metadata`);
  assert.equal(meta.status, 200);
  return { h, realm, clock, userId: user.id, secret, idpMetadata: await meta.text() };
}

export const pathOf = (absolute: string) => {
  const u = new URL(absolute);
  return `${u.pathname}${u.search}`;
};

/** Follows an SSO answer to the login UI and signs in there as the browser would, with MFA. */
export async function signIn(
  s: Setup,
  ssoResponse: Response,
): Promise<{ cookie: string; continueTo: string; sid: string }> {
  assert.equal(ssoResponse.status, 303, await ssoResponse.clone().text());
  const loginUi = new URL(ssoResponse.headers.get('location') ?? '');
  const id = loginUi.searchParams.get('transaction_id');
  const cookie = parseSetCookies(ssoResponse.headers).find((c) => c.name === 'pa_tx')?.value;
  assert.ok(id && cookie);
  const base = `/api/v1/realms/${s.realm.name}/auth/transactions/${id}`;
  const state = await json(await s.h.get(base, { headers: { cookie: `pa_tx=${cookie}` } }));
  const headers = {
    'content-type': 'application/json',
    cookie: `pa_tx=${cookie}`,
    origin: s.h.ctx.config.server.publicOrigin,
    'x-csrf-token': state.body.csrf_token as string,
  };
  const step = async (path: string, body: unknown) =>
    json(await s.h.get(`${base}/${path}`, { method: 'POST', headers, body: JSON.stringify(body) }));
  assert.equal((await step('identify', { identifier: 'alice@example.com' })).status, 200);
  const afterPassword = await step('password', { password: PASSWORD });
  assert.equal(afterPassword.body.status, 'pending', 'the SAML client requires MFA');
  nextTotpStep(s.clock);
  const done = await step('totp', { code: totpCode(s.secret, s.clock.now()) });
  assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
  const sid = parseSetCookies(done.headers).find((c) => c.name === 'pa_sid')?.value;
  assert.ok(sid, 'the sign-in set the SSO session cookie');
  return { cookie, continueTo: done.body.redirect_to as string, sid };
}

/** The HTTP-POST form the continuation answers: its action and fields. */
export async function postForm(h: Harness, continueTo: string) {
  const res = await h.get(pathOf(continueTo));
  assert.equal(res.status, 200);
  const csp = res.headers.get('content-security-policy') ?? '';
  assert.match(csp, /script-src 'sha256-/);
  const html = await res.text();
  const action = /action="([^"]*)"/.exec(html)?.[1] ?? '';
  assert.ok(csp.includes(`form-action ${new URL(action).origin};`), 'forms go to the ACS URL only');
  const field = (name: string) =>
    new RegExp(`name="${name}" value="([^"]*)"`)
      .exec(html)?.[1]
      ?.replace(/&#(\d+);/g, (_, c) => String.fromCharCode(Number(c)));
  return {
    action,
    SAMLResponse: field('SAMLResponse'),
    RelayState: field('RelayState'),
  };
}

/** The HTTP-POST binding: the form samlify built, posted to our SSO endpoint. */
export const postRequest = (s: Setup, request: { context: string; entityEndpoint?: string }, extra = {}) =>
  s.h.get(pathOf(request.entityEndpoint ?? ''), {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ SAMLRequest: request.context, ...extra }).toString(),
  });

export const peers = (s: Setup, sp: Parameters<typeof samlPeers>[1] = {}) => samlPeers(s.idpMetadata, sp);
