// The restore drill of docs/restore.md, on PostgreSQL with the machine's own tools (document 2,
// "Backup and restore" 1-2; "Restore marker"): a running deployment is dumped with `pg_dump -Fc`,
// keeps changing after the dump, its revocation log is shipped with `identity-cli revocation-log`,
// the dump is loaded into a NEW database with `pg_restore`, `identity-cli restore-begin` marks it,
// nothing starts, `identity-cli restore-reconcile --log` re-applies the log and clears the marker,
// and only then a server starts on the restored database. Through its public interfaces nothing
// revoked after the dump works again, and what was never revoked still does.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import pg from 'pg';
import type { ClientRow } from '../../../src/clients/clients.repo.ts';
import { decodeBase32 } from '../../../src/mfa/base32.ts';
import { hotp } from '../../../src/mfa/otp.ts';
import { openPostgres } from '../../../src/platform/db/pg.ts';
import { tempDir } from '../../harness/cli-operator-kit.ts';
import { type Harness, startHarness, TEST_ROOT_KEY } from '../../harness/harness.ts';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import {
  bearer,
  type RecoverySetup,
  recoverySetup,
  redeem,
  refresh,
  tokensFor,
} from '../../harness/recovery-kit.ts';
import { runToEnd } from '../../harness/run-to-end.ts';
import type { JsonResponse } from '../../harness/signin-driver.ts';
import { codeOf, nextTotpStep, PASSWORD, passwordSignIn } from '../../harness/signin-kit.ts';
import { databaseUrlFor, TEST_DATABASE_URL } from '../../harness/test-db.ts';
import {
  oauthPost,
  registerIntrospector,
  seedGrant,
  seedResource,
  seedServiceClient,
} from '../../harness/token-kit.ts';
import { childEnv, json, run } from '../cli/cli-process.ts';

const NEEDS_POSTGRES: string | false = TEST_DATABASE_URL
  ? false
  : 'the drill dumps and restores with pg_dump and pg_restore, which need a PostgreSQL server; the embedded PGlite has neither. It runs with PROUDAUTH_TEST_DATABASE_URL';

async function adminQuery<T extends pg.QueryResultRow>(sql: string): Promise<T[]> {
  const admin = new pg.Client({ connectionString: TEST_DATABASE_URL as string });
  await admin.connect();
  try {
    return (await admin.query<T>(sql)).rows;
  } finally {
    await admin.end();
  }
}

/**
 * pg_dump and pg_restore of the server's major version: PROUDAUTH_TEST_PG_BIN when set (.ci/run sets
 * it), else Debian's /usr/lib/postgresql/<major>/bin when present, else the PATH's.
 */
async function pgTool(name: 'pg_dump' | 'pg_restore'): Promise<string> {
  const dir = process.env.PROUDAUTH_TEST_PG_BIN;
  if (dir) return join(dir, name);
  const [row] = await adminQuery<{ v: string }>('show server_version_num');
  const debian = `/usr/lib/postgresql/${Math.floor(Number(row?.v) / 10000)}/bin/${name}`;
  return existsSync(debian) ? debian : name;
}

async function tool(name: 'pg_dump' | 'pg_restore', args: string[]): Promise<void> {
  const r = await runToEnd(await pgTool(name), args, {
    cwd: process.cwd(),
    env: process.env,
    timeoutMs: 120_000,
  });
  assert.equal(r.code, 0, `${name} ${args.join(' ')}\n${r.stderr}`);
}

const HOTP_SETTINGS = { mfa: { allowed_factors: ['totp', 'hotp', 'recovery_code'] } };
const BOB = 'bob@example.com';
const BOB_NEW = 'bobs-new-password-after-the-dump-7';

/** A headless sign-in by password (and a second step when asked), its code redeemed for `audience`. */
async function signIn(
  s: RecoverySetup,
  email: string,
  password: string,
  audience: string,
  second?: { step: string; code: string },
): Promise<{
  completed: boolean;
  state: JsonResponse;
  tokens?: { access_token: string; refresh_token: string };
}> {
  const { tx, state } = await passwordSignIn(s.h, s.realm.name, 'web-app', email, password, {
    resource: [audience],
  });
  const last =
    second && state.body.status === 'pending' ? await tx.step(second.step, { code: second.code }) : state;
  if (last.body.status !== 'completed') return { completed: false, state: last };
  const res = await redeem(s, { code: codeOf(last.body.redirect_to), verifier: tx.verifier }, audience);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return { completed: true, state: last, tokens: res.body };
}

const ORDERS = 'https://orders.example.com';

/**
 * A realm as recoverySetup makes it, whose 'web-app' may also ask for tokens of the resource
 * ORDERS, which 'orders-api' introspects; active() is the introspection answer on a server.
 */
async function realmSetup(t: Parameters<typeof recoverySetup>[0]) {
  const s = await recoverySetup(t);
  const { h, realm } = s;
  const orders = await seedResource(h, realm, { audience: ORDERS });
  const [client] = (
    await h.ctx.db.query<{ id: string }>(
      `select id from clients where realm_id = $1 and client_id = 'web-app'`,
      [realm.id],
    )
  ).rows;
  await seedGrant(h, realm, client as ClientRow, orders, { scopes: [] });
  const api = await seedServiceClient(h, realm, 'orders-api');
  await registerIntrospector(h, realm, orders, api.client);
  const active = async (on: Harness, token: string) =>
    (await oauthPost(on, realm, 'introspect', { token }, api.creds)).body.active as boolean;
  const admin = (on: Harness, token: string, method: string, path: string, body?: unknown) =>
    bearer({ ...s, h: on }, token, method, path, body);
  return { ...s, active, admin };
}

test('restore drill: pg_dump, changes after it, revocation-log, pg_restore into a new database, restore-begin, restore-reconcile, then nothing revoked works again', {
  skip: NEEDS_POSTGRES,
  timeout: 600_000,
}, async (t) => {
  // Realm 1 has its revocations; realm 2 (on the same deployment) has its signing key compromised,
  // which ends every access token signed before, so each realm's proofs rest on their own records.
  const s = await realmSetup(t);
  const k = await realmSetup(t);
  const { h, realm, active } = s;
  const me = s.accountAudience;
  // A password change ends no other session here.
  await h.setPolicy(realm, { ...HOTP_SETTINGS, password: { revoke_sessions_on_change: false } });

  // Before the dump: what is revoked after it, and what never is.
  const revokedFamily = await tokensFor(s, me, 'totp');
  const revokedAccess = await tokensFor(s, ORDERS, 'totp');
  const endedSession = await tokensFor(s, me, 'totp');
  const adminTokens = await tokensFor(s, s.adminAudience, 'totp');
  const keptOrders = await tokensFor(s, ORDERS, 'totp');
  const kept = await tokensFor(s, me, 'totp');
  assert.equal(await active(h, revokedAccess.access_token), true);
  // HOTP beside TOTP, activated at counter 3.
  const enrolled = await bearer(s, kept.access_token, 'POST', '/me/hotp/enroll', {});
  assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
  const hotpSecret = decodeBase32(enrolled.body.secret as string);
  const hotpCode = (counter: number) => hotp(hotpSecret, counter);
  const activated = await bearer(s, kept.access_token, 'POST', '/me/hotp/activate', { code: hotpCode(3) });
  assert.equal(activated.status, 200, JSON.stringify(activated.body));
  // Bob: a password-only account whose password changes after the dump.
  const bob = await h.createUser(realm, { email: BOB, password: PASSWORD });
  const bobSignedIn = await signIn(s, BOB, PASSWORD, me);
  assert.ok(bobSignedIn.tokens, JSON.stringify(bobSignedIn.state.body));
  // A membership removed after the dump.
  const org = await seedOrganization(h, realm);
  const membership = await seedMembership(h, realm, org, bob.id, 'active');
  // An API key revoked after the dump.
  const principal = await s.admin(h, adminTokens.access_token, 'POST', '/service-principals', {
    name: 'Deployer',
  });
  assert.equal(principal.status, 201, JSON.stringify(principal.body));
  const apiKey = await s.admin(h, adminTokens.access_token, 'POST', '/api-keys', {
    service_principal_id: principal.body.id,
    name: 'ci',
  });
  assert.equal(apiKey.status, 201, JSON.stringify(apiKey.body));
  const keyStatus = async (on: Harness) =>
    (
      await on.get(`/api/v1/realms/${realm.name}/service-principals`, {
        headers: { authorization: `Bearer ${apiKey.body.key}` },
      })
    ).status;
  assert.notEqual(await keyStatus(h), 401, 'the key authenticates before it is revoked');
  // Realm 2: a token for ORDERS and an administrator's tokens, all signed by the key compromised later.
  const signedByOldKey = await tokensFor(k, ORDERS, 'totp');
  const kAdmin = await tokensFor(k, k.adminAudience, 'totp');
  assert.equal(await k.active(k.h, signedByOldKey.access_token), true);

  // 1. The backup: pg_dump -Fc of the running deployment's database.
  const [{ db: sourceDb } = { db: '' }] = (
    await h.ctx.db.query<{ db: string }>('select current_database() as db')
  ).rows;
  const sourceUrl = databaseUrlFor(TEST_DATABASE_URL as string, sourceDb);
  const dir = tempDir(t);
  const dump = join(dir, 'backup.dump');
  await tool('pg_dump', ['-Fc', '-f', dump, '-d', sourceUrl]);

  // 2. The deployment keeps changing after the dump.
  const revoke = (token: string) => oauthPost(h, realm, 'revoke', { token }, s.creds);
  assert.equal((await revoke(revokedFamily.refresh_token)).status, 200);
  assert.equal((await revoke(revokedAccess.access_token)).status, 200);
  const sid = String(decodeJwt(endedSession.access_token).sid);
  assert.equal((await bearer(s, endedSession.access_token, 'DELETE', `/me/sessions/${sid}`)).status, 204);
  const spentCode = s.recoveryCodes[0] as string;
  assert.ok(
    (await signIn(s, 'alice@example.com', PASSWORD, me, { step: 'recovery-code', code: spentCode }))
      .completed,
  );
  assert.ok(
    (await signIn(s, 'alice@example.com', PASSWORD, me, { step: 'hotp', code: hotpCode(4) })).completed,
    'HOTP counter 4',
  );
  // The test clock stands still between steps; a password is replaced after it was set.
  nextTotpStep(s.clock);
  const changed = await bearer(s, bobSignedIn.tokens.access_token, 'POST', '/me/password', {
    current_password: PASSWORD,
    new_password: BOB_NEW,
  });
  assert.equal(changed.status, 200, JSON.stringify(changed.body));
  assert.ok((await signIn(s, BOB, BOB_NEW, me)).completed, 'the new password signs in before the restore');
  const removed = await s.admin(
    h,
    adminTokens.access_token,
    'DELETE',
    `/organizations/${org}/members/${membership}`,
  );
  assert.ok(removed.status < 300, JSON.stringify(removed.body));
  assert.equal(
    (await s.admin(h, adminTokens.access_token, 'DELETE', `/api-keys/${apiKey.body.id}`)).status,
    204,
  );
  assert.equal(await keyStatus(h), 401);
  const rotated = await k.admin(k.h, kAdmin.access_token, 'POST', '/signing-key-rotations', {
    mode: 'emergency',
    reason: 'restore drill',
  });
  assert.equal(rotated.status, 201, JSON.stringify(rotated.body));
  const compromisedKid = rotated.body.previous_kid as string;
  assert.equal(decodeProtectedHeader(signedByOldKey.access_token).kid, compromisedKid);

  // 3. The log is shipped out of the database, as the scheduled job does (default: the last day).
  const shipped = join(dir, 'revocations.jsonl');
  const env = (url: string) =>
    childEnv({
      PROUDAUTH_DATABASE_URL: url,
      PROUDAUTH_DATA_DIR: dir,
      PROUDAUTH_KEYS_ROOT_1: TEST_ROOT_KEY,
      PROUDAUTH_KEYS_ACTIVE_VERSION: '1',
      PROUDAUTH_OBSERVABILITY_LOG_LEVEL: 'warn',
    });
  const cli = async (url: string, args: string[]) => {
    const r = await run('identity-cli', args, { env: env(url), timeoutMs: 120_000 });
    assert.equal(r.code, 0, `identity-cli ${args.join(' ')}\n${r.stderr}`);
    return json(r);
  };
  await cli(sourceUrl, ['revocation-log', '--out', shipped]);
  const kinds = new Set(
    readFileSync(shipped, 'utf8')
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l).kind),
  );
  for (const kind of [
    'refresh_family_revoked',
    'revocation',
    'recovery_code_consumed',
    'hotp_counter',
    'password_changed',
    'membership_state',
    'automation_credential_revoked',
    'key_compromised',
  ])
    assert.ok(kinds.has(kind), `${kind} shipped: ${[...kinds].join(', ')}`);

  // 4. pg_restore into a new database; restore-begin before anything starts on it.
  const restoredDb = `${sourceDb}_restored`;
  await adminQuery(`create database "${restoredDb}"`);
  t.after(() => adminQuery(`drop database if exists "${restoredDb}" with (force)`));
  const restoredUrl = databaseUrlFor(TEST_DATABASE_URL as string, restoredDb);
  await tool('pg_restore', ['--no-owner', '--exit-on-error', '-d', restoredUrl, dump]);
  assert.equal((await cli(restoredUrl, ['restore-begin'])).marked, true);
  assert.equal((await cli(restoredUrl, ['restore-begin', '--status'])).marked, true);

  // 5. restore-reconcile re-applies the shipped log and clears the marker.
  const report = (await cli(restoredUrl, ['restore-reconcile', '--log', shipped])) as {
    applied: Record<string, number>;
    restore_marker_cleared: boolean;
  };
  assert.equal(report.restore_marker_cleared, true, JSON.stringify(report));
  assert.equal((await cli(restoredUrl, ['restore-begin', '--status'])).marked, false);

  // 6. A server on the restored database, with the same root key (and the test's clock, which
  // the TOTP codes above moved ahead of the database's: readiness reports that skew).
  const restored = openPostgres({ url: restoredUrl, maxConns: 5, statementTimeoutMs: 30_000 });
  t.after(() => restored.close());
  const r = await startHarness(t, { db: restored, clock: s.clock });
  const rs: RecoverySetup = { ...s, h: r };
  const rk: RecoverySetup = { ...k, h: r };
  const ready = (await (await r.get('/health/ready')).json()) as { reason?: string };
  assert.notEqual(ready.reason, 'restore_pending', JSON.stringify(ready));

  // Nothing revoked after the dump works again.
  assert.equal(
    (await refresh(rs, revokedFamily.refresh_token, me)).body.error,
    'invalid_grant',
    'revoked family',
  );
  assert.equal(
    (await bearer(rs, endedSession.access_token, 'GET', '/me/sessions')).status,
    401,
    'ended session',
  );
  assert.equal(
    (await refresh(rs, endedSession.refresh_token, me)).body.error,
    'invalid_grant',
    'its refresh',
  );
  assert.equal(await active(r, revokedAccess.access_token), false, 'revoked access token, introspected');
  assert.equal(
    await k.active(r, signedByOldKey.access_token),
    false,
    "the compromised key's token, introspected",
  );
  assert.equal((await k.admin(r, kAdmin.access_token, 'GET', '/signing-keys')).status, 401, 'and at the API');
  const spent = await signIn(rs, 'alice@example.com', PASSWORD, me, {
    step: 'recovery-code',
    code: spentCode,
  });
  assert.equal(spent.completed, false, 'the recovery code spent after the dump');
  const oldHotp = await signIn(rs, 'alice@example.com', PASSWORD, me, { step: 'hotp', code: hotpCode(4) });
  assert.equal(oldHotp.completed, false, 'the HOTP code used after the dump');
  const oldPassword = await signIn(rs, BOB, PASSWORD, me);
  assert.equal(oldPassword.completed, false, "bob's password replaced after the dump");
  assert.ok(
    (oldPassword.state.body.next_actions as { type: string }[]).some((a) => a.type === 'update_password'),
    JSON.stringify(oldPassword.state.body),
  );
  assert.equal(await keyStatus(r), 401, 'the API key revoked after the dump');

  // What was never revoked still works.
  assert.equal(
    (await bearer(rs, kept.access_token, 'GET', '/me/sessions')).status,
    200,
    'a kept access token',
  );
  assert.equal(await active(r, keptOrders.access_token), true, 'a kept resource token, introspected');
  const renewed = await refresh(rs, kept.refresh_token, me);
  assert.equal(renewed.status, 200, JSON.stringify(renewed.body));
  const adminRenewed = await refresh(rs, adminTokens.refresh_token, s.adminAudience);
  assert.equal(adminRenewed.status, 200, JSON.stringify(adminRenewed.body));
  const member = await s.admin(
    r,
    adminRenewed.body.access_token,
    'GET',
    `/organizations/${org}/members/${membership}`,
  );
  assert.equal(member.status, 200, JSON.stringify(member.body));
  assert.equal(member.body.state, 'removed', 'the membership removed after the dump');
  nextTotpStep(s.clock);
  assert.ok(
    (await signIn(rs, 'alice@example.com', PASSWORD, me, { step: 'hotp', code: hotpCode(5) })).completed,
    'the next HOTP code',
  );
  // Realm 2 signs with the key reconciliation made (the emergency rotation's own key was created
  // after the dump); its refresh families were never revoked.
  const rekeyed = await refresh(rk, signedByOldKey.refresh_token, ORDERS);
  assert.equal(rekeyed.status, 200, JSON.stringify(rekeyed.body));
  assert.notEqual(decodeProtectedHeader(rekeyed.body.access_token).kid, compromisedKid);
  assert.notEqual(decodeProtectedHeader(rekeyed.body.access_token).kid, rotated.body.new_kid);
  assert.equal(await k.active(r, rekeyed.body.access_token), true);
});
