// The adapters as configuration templates (docs/federation.md, Presets), each exercised end to end
// against a local stand-in of the real provider: Google (OpenID Connect), Microsoft Entra ID
// (multi-tenant {tenant} issuer, {tenantid} discovery, allowed tenants), GitHub (plain OAuth 2.0
// with a profile and an emails endpoint), GitLab (OpenID Connect, nickname) and Apple (a client
// secret signed with the team's key, answers by form_post).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  createConnection,
  type FederationSetup,
  federationSetup,
  headless,
  openCallback,
  startFederation,
} from '../../harness/federation-kit.ts';
import { rows } from '../../harness/signin-kit.ts';
import { type Standin, startStandin } from '../../harness/upstream-standin.ts';

// biome-ignore lint/suspicious/noExplicitAny: rows are read member by member
type Row = any;

async function signIn(s: FederationSetup, up: Standin, alias: string) {
  const tx = await headless(s);
  const started = await startFederation(tx, alias);
  const external = new URL(started.body.external_redirect);
  const callback = await up.authorize(started.body.external_redirect);
  const back = await openCallback(callback);
  assert.equal(back.status, 200, await back.clone().text());
  return { tx, external, callback, state: (await tx.get()).body };
}

const linkOf = async (s: FederationSetup): Promise<Row> =>
  (
    await rows(s.h, 'select * from linked_identities where realm_id = $1 order by created_at desc', [
      s.realm.id,
    ])
  )[0];

const emailOf = async (s: FederationSetup, userId: string): Promise<Row> =>
  (
    await rows(
      s.h,
      `select value, verified from user_identifiers where realm_id = $1 and user_id = $2 and type = 'email'`,
      [s.realm.id, userId],
    )
  )[0];

describe('federation › presets against local stand-ins', () => {
  test('case=google: the template asks for openid email profile; the stand-in stands at its issuer/mode=headless', async (t) => {
    const s = await federationSetup(t);
    const up = await startStandin(t);
    const c = await createConnection(s, {
      alias: 'google',
      display_name: 'Google',
      adapter: 'google',
      issuer: up.issuer,
      config: { client_id: up.clientId },
      client_secret: up.clientSecret,
    });
    assert.equal(c.kind, 'oidc');
    const { external, state } = await signIn(s, up, 'google');
    assert.deepEqual(external.searchParams.get('scope')?.split(' ').sort(), ['email', 'openid', 'profile']);
    assert.equal(state.status, 'completed');
    const link = await linkOf(s);
    assert.deepEqual(await emailOf(s, link.user_id), { value: 'ada@upstream.example', verified: true });
  });

  test('case=microsoft: a {tenant} issuer discovers {tenantid}, takes allowed tenants and refuses others/mode=headless', async (t) => {
    const s = await federationSetup(t);
    const tenant = '72f988bf-86f1-41af-91ab-2d7cd011db47';
    const up = await startStandin(t, { tenant });
    const c = await createConnection(s, {
      alias: 'entra',
      display_name: 'Contoso',
      adapter: 'microsoft',
      issuer: up.issuer,
      config: {
        client_id: up.clientId,
        discovery_url: `${up.url}/organizations/v2.0/.well-known/openid-configuration`,
        allowed_tenants: [tenant],
        trust_email: true,
      },
      client_secret: up.clientSecret,
    });
    assert.equal(c.issuer, `${up.url}/{tenant}/v2.0`);
    const { state } = await signIn(s, up, 'entra');
    assert.equal(state.status, 'completed', JSON.stringify(state));
    const link = await linkOf(s);
    assert.equal(link.upstream_issuer, `${up.url}/${tenant}/v2.0`, 'the link names the tenant issuer');
    assert.deepEqual(await emailOf(s, link.user_id), { value: 'ada@upstream.example', verified: true });

    const other = await startStandin(t, { tenant: 'ffffffff-0000-0000-0000-000000000000' });
    await s.admin.call('PATCH', `/identity-providers/${c.id}`, {
      config: {
        client_id: other.clientId,
        discovery_url: `${other.url}/organizations/v2.0/.well-known/openid-configuration`,
        allowed_tenants: [tenant],
      },
      client_secret: other.clientSecret,
    });
    await s.h.ctx.db.query(`update identity_providers set issuer = $2 where realm_id = $1 and id = $3`, [
      s.realm.id,
      other.issuer,
      c.id,
    ]);
    const refused = await signIn(s, other, 'entra');
    assert.equal(refused.state.status, 'pending');
    assert.equal(
      (await rows(s.h, 'select 1 from linked_identities where realm_id = $1', [s.realm.id])).length,
      1,
    );
    const [row] = await rows(
      s.h,
      'select failures from signin_transactions where realm_id = $1 and id = $2',
      [s.realm.id, refused.tx.id],
    );
    assert.equal(row?.failures, 1, 'a tenant the connection does not accept is a failed proof');
  });

  test('case=microsoft, one tenant: its issuer is discovered at its own address, not the template one/mode=headless', async (t) => {
    const s = await federationSetup(t);
    const tenant = '11111111-2222-3333-4444-555555555555';
    const up = await startStandin(t, { tenant });
    await createConnection(s, {
      alias: 'contoso',
      display_name: 'Contoso',
      adapter: 'microsoft',
      issuer: `${up.url}/${tenant}/v2.0`,
      config: { client_id: up.clientId, trust_email: true },
      client_secret: up.clientSecret,
    });
    const { state } = await signIn(s, up, 'contoso');
    assert.equal(state.status, 'completed', JSON.stringify(state));
    assert.equal((await linkOf(s)).upstream_issuer, `${up.url}/${tenant}/v2.0`);
  });

  test('case=github: plain OAuth 2.0, the numeric id as subject, the primary verified address from the emails endpoint/mode=headless', async (t) => {
    const s = await federationSetup(t);
    const up = await startStandin(t, { github: true });
    up.account = {
      sub: 'unused',
      githubId: 583231,
      login: 'octocat',
      name: 'The Octocat',
      email: 'octo@upstream.example',
      email_verified: true,
    };
    const c = await createConnection(s, {
      alias: 'github',
      display_name: 'GitHub',
      adapter: 'github',
      config: {
        client_id: up.clientId,
        authorization_endpoint: `${up.url}/login/oauth/authorize`,
        token_endpoint: `${up.url}/login/oauth/access_token`,
        userinfo_endpoint: `${up.url}/user`,
        emails_endpoint: `${up.url}/user/emails`,
      },
      client_secret: up.clientSecret,
    });
    assert.deepEqual([c.kind, c.issuer], ['oauth2', 'https://github.com']);
    const { external, state } = await signIn(s, up, 'github');
    assert.equal(external.searchParams.get('nonce'), null, 'no nonce for plain OAuth 2.0');
    assert.equal(external.searchParams.get('scope'), 'read:user user:email');
    assert.equal(state.status, 'completed', JSON.stringify(state));
    const link = await linkOf(s);
    assert.deepEqual([link.upstream_issuer, link.upstream_subject], ['https://github.com', '583231']);
    assert.deepEqual(await emailOf(s, link.user_id), { value: 'octo@upstream.example', verified: true });
    assert.equal(up.hits.discovery, 0, 'nothing to discover');
  });

  test('case=gitlab: OpenID Connect with nickname as the preferred username/mode=headless', async (t) => {
    const s = await federationSetup(t);
    const up = await startStandin(t);
    up.account = { sub: '17', email: 'gl@upstream.example', email_verified: true };
    await createConnection(s, {
      alias: 'gitlab',
      display_name: 'GitLab',
      adapter: 'gitlab',
      issuer: up.issuer,
      config: { client_id: up.clientId },
      client_secret: up.clientSecret,
    });
    const { state } = await signIn(s, up, 'gitlab');
    assert.equal(state.status, 'completed');
    assert.equal((await linkOf(s)).upstream_subject, '17');
  });

  test('case=apple: the client secret is a JWT of the team key, the answer comes by form_post/mode=headless', async (t) => {
    const s = await federationSetup(t);
    const up = await startStandin(t, { apple: true });
    up.account = { sub: '001234.abcd', email: 'x7@privaterelay.appleid.com', email_verified: 'true' };
    await createConnection(s, {
      alias: 'apple',
      display_name: 'Apple',
      adapter: 'apple',
      issuer: up.issuer,
      config: { client_id: up.clientId, team_id: up.appleKey.teamId, key_id: up.appleKey.kid },
      client_secret: up.appleKey.privatePem,
    });
    const tx = await headless(s);
    const started = await startFederation(tx, 'apple');
    assert.equal(new URL(started.body.external_redirect).searchParams.get('response_mode'), 'form_post');
    const callback = new URL(await up.authorize(started.body.external_redirect));
    const posted = await fetch(`${callback.origin}${callback.pathname}`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: callback.searchParams.toString(),
    });
    assert.equal(posted.status, 303, 'the form post becomes a GET that carries the browser binding');
    const again = new URL(posted.headers.get('location') ?? '', callback.origin);
    assert.equal(again.pathname, callback.pathname);
    assert.equal(again.searchParams.get('code'), callback.searchParams.get('code'));
    assert.equal((await openCallback(again.href)).status, 200);
    const state = (await tx.get()).body;
    assert.equal(state.status, 'completed', JSON.stringify(state));
    const link = await linkOf(s);
    assert.deepEqual(await emailOf(s, link.user_id), {
      value: 'x7@privaterelay.appleid.com',
      verified: true,
    });
  });
});
