// Erasing an account (spec doc 2, Catalog: user.deleted "account erased"; src/users/account-erasure.ts):
// the registry of user-owned tables matches the schema, and each of the three ways an account is
// erased (an administrator's DELETE, self-deletion after its grace period, lifecycle expiry) leaves
// no row of the tables erasure clears, for an account that held every kind of factor.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { decodeBase32 } from '../../../src/mfa/base32.ts';
import { hotp } from '../../../src/mfa/otp.ts';
import { USER_OWNED_TABLES } from '../../../src/users/account-erasure.ts';
import { runLifecycleRules } from '../../../src/users/lifecycle.task.ts';
import { eraseDueAccounts } from '../../../src/users/self-deletion.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import type { Harness } from '../../harness/harness.ts';
import { json, startHeadless } from '../../harness/signin-driver.ts';
import {
  actionTypes,
  count,
  enrollTotp,
  type MovableClock,
  movableClock,
  nextTotpStep,
  PASSWORD,
  REDIRECT,
  rows,
  signinSetup,
  totpCode,
} from '../../harness/signin-kit.ts';
import { SoftAuthenticator } from '../../harness/soft-authenticator.ts';
import { clientSecret, exchangeCode, grantResources } from '../../harness/token-kit.ts';

const DAY = 86_400_000;

/**
 * Columns of the schema that can name an account: a foreign key to users, a column named user_id
 * or ending in _user_id, and an `X_id` column beside an `X_type` column (a subject, actor, target
 * or requester that may be a user).
 */
async function userColumns(h: Harness): Promise<string[]> {
  const r = await h.ctx.db.query<{ table_name: string; column_name: string }>(
    `select distinct kcu.table_name, kcu.column_name
       from information_schema.referential_constraints rc
       join information_schema.key_column_usage kcu
         on kcu.constraint_name = rc.constraint_name and kcu.constraint_schema = rc.constraint_schema
       join information_schema.key_column_usage ref
         on ref.constraint_name = rc.unique_constraint_name and ref.constraint_schema = rc.unique_constraint_schema
        and ref.ordinal_position = kcu.position_in_unique_constraint
      where kcu.table_schema = current_schema() and ref.table_name = 'users' and ref.column_name = 'id'
     union
     select table_name, column_name from information_schema.columns
      where table_schema = current_schema() and table_name <> 'users'
        and (column_name = 'user_id' or column_name like '%\\_user\\_id')
     union
     select c.table_name, c.column_name from information_schema.columns c
       join information_schema.columns t
         on t.table_schema = c.table_schema and t.table_name = c.table_name
        and t.column_name = left(c.column_name, length(c.column_name) - 3) || '_type'
      where c.table_schema = current_schema() and c.column_name like '%\\_id'`,
  );
  return r.rows.map((x) => `${x.table_name}.${x.column_name}`).sort();
}

/** Columns that look like a reference to a principal but never name an account. */
const NOT_ACCOUNTS: Record<string, string> = {
  'role_assignments.scope_id': 'the scope is the realm, an organization or a project',
  'emergency_controls.target_id':
    'emergency controls act on clients, providers, hooks, webhooks, organizations, principals and grant types',
  'webhook_deliveries.event_id': 'event_type names the kind of event, and event_id the event',
};

describe('users › account erasure registry', () => {
  test('case=every column that can name an account is in the registry, and the registry names real columns', async (t) => {
    const { h } = await signinSetup(t);
    const found = (await userColumns(h)).filter((c) => !(c in NOT_ACCOUNTS));
    const listed = USER_OWNED_TABLES.flatMap((e) => e.columns.map((c) => `${e.table}.${c}`));
    assert.deepEqual(
      found.filter((c) => !listed.includes(c)),
      [],
      'user-owned columns that src/users/account-erasure.ts does not decide (erase, anonymise or keep, with why)',
    );
    const existing = await h.ctx.db.query<{ c: string }>(
      `select table_name || '.' || column_name as c from information_schema.columns
        where table_schema = current_schema()`,
    );
    const columns = new Set(existing.rows.map((r) => r.c));
    assert.deepEqual(
      listed.filter((c) => !columns.has(c)),
      [],
      'registry entries for columns that do not exist',
    );
    for (const e of USER_OWNED_TABLES) assert.ok(e.why.length > 10, `${e.table} says why`);
    assert.equal(new Set(USER_OWNED_TABLES.map((e) => e.table)).size, USER_OWNED_TABLES.length);
  });
});

/** Tables whose rows the fixture creates for the account; each must hold one before erasure. */
const FACTOR_TABLES = [
  'user_identifiers',
  'password_credentials',
  'password_history',
  'totp_credentials',
  'hotp_credentials',
  'recovery_codes',
  'webauthn_credentials',
  'factor_enrollments',
  'remembered_devices',
  'consents',
];

/** Rows of the account in an erased table, read by the column names rather than the registry's SQL. */
async function rowsOf(h: Harness, realmId: string, userId: string, table: string, column: string) {
  const polymorphic = column === 'subject_id' ? ` and subject_type = 'user'` : '';
  return count(h, `select 1 from ${table} where realm_id = $1 and ${column} = $2${polymorphic}`, [
    realmId,
    userId,
  ]);
}

/**
 * Alice with every factor: password (changed once, so a history row), TOTP with recovery codes, a
 * remembered device, HOTP, a passkey made by the software authenticator, and a TOTP re-enrollment
 * left pending.
 */
async function accountWithEveryFactor(t: TestContext) {
  const clock = movableClock();
  const s = await signinSetup(t, { clock });
  const { h, realm, user } = s;
  await grantResources(h, realm, s.client, ['builtin:account']);
  const { secret } = await enrollTotp(h, realm, 'web-app', 'alice@example.com', clock);
  await h.setPolicy(realm, {
    login: { remember_devices: true },
    mfa: { allowed_factors: ['totp', 'hotp', 'webauthn', 'recovery_code'] },
    password: { history_count: 2 },
  });
  const creds = { clientId: 'web-app', secret: await clientSecret(h, realm, s.client) };
  const audience = `${h.ctx.config.server.publicOrigin}/api/v1/realms/${realm.name}/me`;

  // A TOTP sign-in that remembers the device and gives an account token from an MFA session.
  nextTotpStep(clock);
  const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT, { resource: [audience] });
  await tx.step('identify', { identifier: 'alice@example.com' });
  const pwd = await tx.step('password', { password: PASSWORD });
  assert.deepEqual(actionTypes(pwd.body), ['totp', 'recovery_code']);
  await tx.step('totp', { code: totpCode(secret, clock.now()) });
  const done = await tx.step('remember-device', { remember: true });
  assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
  const exchanged = await exchangeCode(h, realm, creds, done.body.redirect_to, tx.verifier, {
    resource: audience,
  });
  assert.equal(exchanged.status, 200, JSON.stringify(exchanged.body));
  const token: string = exchanged.body.access_token;
  const me = async (method: string, path: string, body: unknown = {}) =>
    json(
      await h.get(`/api/v1/realms/${realm.name}/me${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }),
    );

  const enrolled = await me('POST', '/hotp/enroll');
  assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
  const code = hotp(decodeBase32(enrolled.body.secret), 0);
  const activated = await me('POST', '/hotp/activate', { code });
  assert.equal(activated.status, 200, JSON.stringify(activated.body));
  const authenticator = new SoftAuthenticator(h.ctx.config.server.publicOrigin);
  const options = await me('POST', '/webauthn/registration-options');
  assert.equal(options.status, 200, JSON.stringify(options.body));
  const passkey = await me('POST', '/webauthn/registration-complete', {
    credential: await authenticator.create(options.body),
  });
  assert.equal(passkey.status, 201, JSON.stringify(passkey.body));
  const pending = await me('POST', '/totp/enroll');
  assert.equal(pending.status, 201, JSON.stringify(pending.body));
  const changed = await me('POST', '/password', {
    current_password: PASSWORD,
    new_password: 'another-horse-7',
  });
  assert.ok(changed.status < 300, JSON.stringify(changed.body));
  // Consent is remembered by the consent step; written directly here, as the client asks none.
  await h.ctx.db.query(
    `insert into consents (realm_id, user_id, client_id, scopes, created_at, updated_at)
     values ($1, $2, 'web-app', '{openid}', $3, $3) on conflict do nothing`,
    [realm.id, user.id, clock.now()],
  );

  for (const table of FACTOR_TABLES)
    assert.ok((await rowsOf(h, realm.id, user.id, table, 'user_id')) > 0, `the fixture made a ${table} row`);
  return { ...s, clock: clock as MovableClock, me };
}

/** After erasure: no row in an erased table, the anonymised rows stripped. */
async function assertErased(h: Harness, realmId: string, userId: string) {
  const left: string[] = [];
  for (const e of USER_OWNED_TABLES.filter((x) => x.disposition === 'erased'))
    for (const c of e.columns)
      if ((await rowsOf(h, realmId, userId, e.table, c)) > 0) left.push(`${e.table}.${c}`);
  assert.deepEqual(left, [], 'rows left in tables erasure clears');
  const [user] = await rows(h, 'select * from users where realm_id = $1 and id = $2', [realmId, userId]);
  assert.equal(user?.state, 'deleted');
  assert.equal(user?.display_name, null);
  assert.deepEqual(user?.attributes, {});
  assert.equal(
    await count(h, 'select 1 from sessions where realm_id = $1 and user_id = $2 and user_agent is not null', [
      realmId,
      userId,
    ]),
    0,
  );
}

describe('users › account erasure', () => {
  test('case=an administrator deletes the account', async (t) => {
    const s = await accountWithEveryFactor(t);
    // The administrator's own sign-in through identity-cli answers no remember_device question.
    await s.h.setPolicy(s.realm, { login: { remember_devices: false } });
    const admin = await apiCaller(s.h, s.realm);
    const res = await admin.call('DELETE', `/users/${s.user.id}`);
    assert.equal(res.status, 204, await res.text());
    await assertErased(s.h, s.realm.id, s.user.id);
  });

  test('case=self-deletion, erased after the grace period', async (t) => {
    const s = await accountWithEveryFactor(t);
    const requested = await s.me('POST', '/deletion');
    assert.equal(requested.status, 202, JSON.stringify(requested.body));
    const later = new Date(s.h.clock.now().getTime() + 31 * DAY);
    assert.deepEqual(await eraseDueAccounts({ db: s.h.ctx.db }, later), { erased: 1 });
    await assertErased(s.h, s.realm.id, s.user.id);
  });

  test('case=lifecycle expiry of an idle guest', async (t) => {
    const s = await accountWithEveryFactor(t);
    await s.h.setPolicy(s.realm, { lifecycle: { guest_ttl_days: 5 } });
    await s.h.ctx.db.query('update users set is_guest = true where realm_id = $1 and id = $2', [
      s.realm.id,
      s.user.id,
    ]);
    const later = new Date(s.h.clock.now().getTime() + 6 * DAY);
    assert.equal((await runLifecycleRules({ db: s.h.ctx.db }, later)).erased, 1);
    await assertErased(s.h, s.realm.id, s.user.id);
  });
});
