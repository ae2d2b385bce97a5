// The revocation log (document 2, "Revocation log record kinds"): every kind is appended by the
// database in the transaction of the change that causes it, none when that transaction rolls back,
// and no record carries a verifier or a secret.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import { rows, signinSetup } from '../../harness/signin-kit.ts';
import { clientSecret, codeFlow } from '../../harness/token-kit.ts';

// Planted in every secret column the changes below touch; none may reach the log.
const MARK = 'PLANTED-SECRET-7f3a';

async function setup(t: Parameters<typeof signinSetup>[0]) {
  const s = await signinSetup(t);
  const { h, realm, client, user } = s;
  const creds = { clientId: 'web-app', secret: await clientSecret(h, realm, client) };
  const tokens = await codeFlow(h, realm, creds, { start: { scope: 'openid offline_access' } });
  assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
  const q = (sql: string, params: unknown[] = []) => h.ctx.db.query(sql, [realm.id, ...params]);
  await q(`update password_credentials set hash = $2 where realm_id = $1`, [`${MARK}-hash`]);
  await q(`update signing_keys set private_key_sealed = $2 where realm_id = $1`, [`${MARK}-key`]);
  await q(`update client_secrets set verifier = $2 where realm_id = $1`, [`${MARK}-verifier`]);
  await q(`update sessions set cookie_digest = $2 where realm_id = $1`, [`${MARK}-cookie`]);
  await q(
    `insert into hotp_credentials (realm_id, user_id, id, secret_sealed, counter, created_at)
     values ($1, $2, 'hotp_1', $3, 5, now())`,
    [user.id, `${MARK}-hotp`],
  );
  await q(
    `insert into recovery_codes (realm_id, user_id, code_digest, batch_id, created_at)
     values ($1, $2, 'digest-1', 'batch-1', now()), ($1, $2, 'digest-2', 'batch-1', now())`,
    [user.id],
  );
  const org = await seedOrganization(h, realm);
  const member = await seedMembership(h, realm, org, user.id, 'active');
  const invited = await seedMembership(
    h,
    realm,
    org,
    (await h.createUser(realm, { email: 'bob@example.com' })).id,
    'invited',
  );
  const log = async () =>
    rows(h, 'select kind, record from revocation_log where realm_id = $1 order by seq', [realm.id]);
  return { ...s, q, log, member, invited };
}

type Change = { kind: string; sql: string; params?: (s: Awaited<ReturnType<typeof setup>>) => unknown[] };

// One change per kind this version can cause; each must append exactly its kind.
const CHANGES: Change[] = [
  {
    kind: 'revocation',
    sql: `update sessions set revoked_at = now(), revoked_reason = 'logout' where realm_id = $1`,
  },
  {
    kind: 'revocation',
    sql: `insert into token_revocations (realm_id, jti, reason, expires_at, created_at) values ($1, 'jti-1', 'revoked', now() + interval '5 minutes', now())`,
  },
  {
    kind: 'revocation',
    sql: `insert into user_revocations (realm_id, user_id, revoked_before) values ($1, $2, now())`,
    params: (s) => [s.user.id],
  },
  {
    kind: 'revocation',
    sql: `update clients set state = 'disabled' where realm_id = $1 and client_id = 'web-app'`,
  },
  {
    kind: 'tombstone',
    sql: `update users set state = 'deleted' where realm_id = $1 and id = $2`,
    params: (s) => [s.user.id],
  },
  {
    kind: 'key_compromised',
    sql: `update signing_keys set state = 'compromised', compromised_at = now() where realm_id = $1 and state = 'active'`,
  },
  {
    kind: 'user_state',
    sql: `update users set state = 'suspended' where realm_id = $1 and id = $2`,
    params: (s) => [s.user.id],
  },
  {
    kind: 'invitation_consumed',
    sql: `update memberships set state = 'active' where realm_id = $1 and id = $2`,
    params: (s) => [s.invited],
  },
  {
    kind: 'password_changed',
    sql: `update password_credentials set hash = $2, created_at = now() + interval '1 second' where realm_id = $1`,
    params: () => [`${MARK}-new-hash`],
  },
  {
    kind: 'client_credential_revoked',
    sql: `update client_secrets set revoked_at = now() where realm_id = $1`,
  },
  {
    kind: 'membership_state',
    sql: `update memberships set state = 'removed' where realm_id = $1 and id = $2`,
    params: (s) => [s.member],
  },
  { kind: 'refresh_rotated', sql: `update refresh_tokens set rotated_at = now() where realm_id = $1` },
  {
    kind: 'refresh_family_revoked',
    sql: `update refresh_families set revoked_at = now() where realm_id = $1`,
  },
  { kind: 'grant_revoked', sql: `update oauth_grants set revoked_at = now() where realm_id = $1` },
  {
    kind: 'recovery_code_consumed',
    sql: `update recovery_codes set used_at = now() where realm_id = $1 and code_digest = 'digest-1'`,
  },
  {
    kind: 'recovery_codes_replaced',
    sql: `insert into recovery_codes (realm_id, user_id, code_digest, batch_id, created_at) values ($1, $2, 'digest-3', 'batch-2', now()), ($1, $2, 'digest-4', 'batch-2', now())`,
    params: (s) => [s.user.id],
  },
  { kind: 'hotp_counter', sql: `update hotp_credentials set counter = 9 where realm_id = $1` },
];

test('each kind is appended by the change that causes it, with identifiers and digests only', async (t) => {
  const s = await setup(t);
  const before = (await s.log()).length;
  for (const c of CHANGES) {
    const n = (await s.log()).length;
    await s.q(c.sql, c.params?.(s) ?? []);
    const added = (await s.log()).slice(n);
    assert.ok(added.length >= 1, `${c.kind}: no record for ${c.sql}`);
    assert.ok(
      added.every((r) => r.kind === c.kind),
      `${c.kind}: ${JSON.stringify(added.map((r) => r.kind))}`,
    );
  }
  const all = await s.log();
  assert.ok(all.length > before);
  assert.equal(JSON.stringify(all).includes(MARK), false, 'no planted secret in the log');
  assert.equal(JSON.stringify(all).includes(s.user.id), true, 'the log names the account by its identifier');
  // The recovery batch replaced is one record, however many codes the batch holds.
  assert.equal(
    all.filter((r) => r.kind === 'recovery_codes_replaced' && r.record.batch_id === 'batch-2').length,
    1,
  );
});

test('a change that rolls back leaves no record; unrelated updates leave none', async (t) => {
  const s = await setup(t);
  const n = (await s.log()).length;
  await assert.rejects(
    s.h.ctx.db.tx(async (tx) => {
      await tx.query(`update sessions set revoked_at = now() where realm_id = $1`, [s.realm.id]);
      await tx.query(`update oauth_grants set revoked_at = now() where realm_id = $1`, [s.realm.id]);
      throw new Error('rolled back');
    }),
    /rolled back/,
  );
  // Updates that revoke nothing: a session seen, a password re-peppered, a user renamed.
  await s.q(`update sessions set last_seen_at = now() where realm_id = $1`);
  await s.q(`update password_credentials set hash = 'rehash', pepper_version = 2 where realm_id = $1`);
  await s.q(`update users set display_name = 'Alice' where realm_id = $1`);
  assert.equal((await s.log()).length, n);
});

// automation_credential_revoked is caused since SCIM connectors and API keys, the registration kinds
// by dynamic client registration (their own tests).
test('the kinds of dynamic client registration are known to the log table', async (t) => {
  const s = await setup(t);
  for (const kind of ['initial_access_token', 'registration_token_rotated'])
    await s.q(`insert into revocation_log (realm_id, kind, record) values ($1, $2, '{}')`, [kind]);
  await assert.rejects(s.q(`insert into revocation_log (realm_id, kind, record) values ($1, 'other', '{}')`));
});
