import assert from 'node:assert/strict';
import { createPublicKey } from 'node:crypto';
import { describe, test } from 'node:test';
import { exportJWK } from 'jose';
import { OPERATOR_ACTOR } from '../../../src/audit/audit.types.ts';
import { sealContext } from '../../../src/keys/signing-key-material.ts';
import { createRealm } from '../../../src/setup/realm.service.ts';
import { startHarness } from '../../harness/harness.ts';
import { keysIn } from './key-helpers.ts';

// The defaults of a new realm, written out here rather than imported, so the test checks the code.
const NEW_REALM_POLICY = {
  webauthn: { allow_synced: true, user_verification: 'preferred' },
  registration: { mode: 'closed', require_email_verification: true },
  password: { revoke_sessions_on_change: true },
  mfa: { requirement: 'optional', allowed_factors: ['totp', 'webauthn', 'recovery_code'] },
  login: { identifiers: ['email', 'username'], password: true },
  lifecycle: { unverified_account_ttl_hours: 72 },
  impersonation: { notify_customer: true, approval: 'none', allow_customer_opt_out: true },
};

describe('realms › creation', () => {
  test('case=a new realm starts at policy revision 1 holding the documented defaults', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    assert.equal(realm.state, 'active');
    assert.equal(realm.policy_revision, 1);
    assert.match(realm.id, /^rlm_[0-9a-hjkmnp-tv-z]{26}$/);
    const revisions = await h.ctx.db.query<{ revision: number; policy: unknown }>(
      'select revision, policy from realm_policy_revisions where realm_id = $1',
      [realm.id],
    );
    assert.equal(revisions.rows.length, 1);
    assert.equal(revisions.rows[0]?.revision, 1);
    assert.deepEqual(revisions.rows[0]?.policy, NEW_REALM_POLICY);
  });

  test('case=a new realm has the built-in roles, the identity-cli native public client and the account page client', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    const roles = await h.ctx.db.query<{ name: string; builtin: boolean; scope: string }>(
      'select name, builtin, scope from roles where realm_id = $1 order by name',
      [realm.id],
    );
    assert.deepEqual(roles.rows, [
      { name: 'admin', builtin: true, scope: 'organization' },
      { name: 'member', builtin: true, scope: 'organization' },
      { name: 'owner', builtin: true, scope: 'organization' },
      { name: 'realm-admin', builtin: true, scope: 'realm' },
      { name: 'resource-server', builtin: true, scope: 'realm' },
    ]);

    const clients = await h.ctx.db.query<Record<string, unknown>>(
      `select client_id, type, builtin, state, redirect_uris, grant_types, token_endpoint_auth_method
         from clients where realm_id = $1 order by id`,
      [realm.id],
    );
    assert.equal(clients.rows.length, 2);
    const cli = clients.rows[0]!;
    assert.equal(cli.client_id, 'identity-cli');
    assert.equal(cli.type, 'native');
    assert.equal(cli.builtin, true);
    assert.equal(cli.state, 'active');
    assert.equal(cli.token_endpoint_auth_method, 'none', 'a public client has no secret');
    const redirects = cli.redirect_uris as string[];
    assert.ok(redirects.length > 0);
    for (const uri of redirects) {
      assert.match(uri, /^http:\/\/(127\.0\.0\.1|\[::1\])\//, `${uri} is a loopback IP literal URI`);
    }
    assert.ok((cli.grant_types as string[]).includes('authorization_code'));

    // The account page's public browser client; its redirect URI derives from the public origin.
    const account = clients.rows[1]!;
    assert.deepEqual(
      [account.client_id, account.type, account.builtin, account.state, account.token_endpoint_auth_method],
      ['account', 'spa', true, 'active', 'none'],
    );
    assert.deepEqual(account.redirect_uris, []);
  });

  test('case=realm creation is audited with its signing key', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    const audit = await h.ctx.db.query<Record<string, unknown>>(
      `select type, category, outcome, actor_type, target_type, target_id, data
         from audit_events where realm_id = $1 order by type`,
      [realm.id],
    );
    const created = audit.rows.find((a) => a.type === 'realm.created');
    assert.ok(created, 'a realm.created audit record exists');
    assert.equal(created.category, 'configuration');
    assert.equal(created.outcome, 'success');
    assert.equal(created.actor_type, 'operator');
    assert.equal(created.target_type, 'realm');
    assert.equal(created.target_id, realm.id);
    assert.equal((created.data as Record<string, unknown>).policy_revision, 1);

    const [active] = await keysIn(h.ctx.db, realm.id, 'active');
    const keyAudit = audit.rows.find((a) => a.type === 'signing_key.created');
    assert.equal(keyAudit?.target_id, active?.kid);
  });

  test('case=the private signing key is stored sealed and opens only with its own row binding', async (t) => {
    const h = await startHarness(t);
    const keyring = h.ctx.keyring!;
    const realm = await h.createRealm();
    const other = await h.createRealm();
    const [active] = await keysIn(h.ctx.db, realm.id, 'active');
    const [otherActive] = await keysIn(h.ctx.db, other.id, 'active');
    assert.ok(active && otherActive);
    assert.equal(active.root_key_version, 1);
    assert.doesNotMatch(active.private_key_sealed, /PRIVATE KEY|BEGIN/);
    assert.match(active.private_key_sealed, /^pa1\.1\./, 'sealed under root key version 1');

    const pem = keyring
      .decrypt('signing-key', active.private_key_sealed, sealContext(realm.id, active.kid))
      .toString('utf8');
    assert.match(pem, /^-----BEGIN PRIVATE KEY-----/);
    // The sealed private key belongs to the published public key.
    const published = await h.ctx.db.query<{ public_jwk: Record<string, unknown> }>(
      'select public_jwk from signing_keys where realm_id = $1 and kid = $2',
      [realm.id, active.kid],
    );
    const derived = await exportJWK(createPublicKey(pem));
    assert.equal(derived.n, published.rows[0]?.public_jwk.n);

    // Moved to another realm's row, or read with another purpose, it does not open.
    assert.throws(() =>
      keyring.decrypt('signing-key', active.private_key_sealed, sealContext(other.id, active.kid)),
    );
    assert.throws(() =>
      keyring.decrypt('signing-key', active.private_key_sealed, sealContext(realm.id, otherActive.kid)),
    );
    assert.throws(() =>
      keyring.decrypt('totp-seed', active.private_key_sealed, sealContext(realm.id, active.kid)),
    );
  });

  test('case=an invalid or taken realm name is refused and writes nothing', async (t) => {
    const h = await startHarness(t);
    const deps = { db: h.ctx.db, keyring: h.ctx.keyring!, signingAlgorithm: 'RS256' as const };
    const count = async (table: 'realms' | 'signing_keys' | 'audit_events') =>
      Number((await h.ctx.db.query<{ n: string }>(`select count(*) as n from ${table}`)).rows[0]?.n);
    const before = { realms: await count('realms'), keys: await count('signing_keys') };
    await assert.rejects(
      createRealm(deps, { name: 'Not_Valid' }, OPERATOR_ACTOR, h.ctx.clock.now()),
      /invalid realm name/,
    );
    const realm = await h.createRealm();
    const audits = await count('audit_events');
    await assert.rejects(
      createRealm(deps, { name: realm.name }, OPERATOR_ACTOR, h.ctx.clock.now()),
      /already exists/,
    );
    assert.equal(await count('realms'), before.realms + 1);
    assert.equal(await count('signing_keys'), before.keys + 1, 'the refused realms left no key behind');
    assert.equal(await count('audit_events'), audits, 'nor an audit record');
  });
});
