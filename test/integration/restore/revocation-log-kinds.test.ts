// Every record kind of the revocation log (document 2, "Revocation log record kinds") caused the
// way a user, an administrator or a client causes it, through the public interfaces: each change
// appends exactly one record of its kind naming what changed, and a refused change appends none.
// revocation-log.test.ts covers the same kinds at the table level (rollback, planted secrets);
// the dynamic registration kinds are also re-applied in real-clients/registration.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt } from 'jose';
import { decodeBase32 } from '../../../src/mfa/base32.ts';
import { hotp } from '../../../src/mfa/otp.ts';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import {
  bearer,
  type RecoverySetup,
  recoveryCodeSignIn,
  recoverySetup,
  redeem,
  refresh,
  tokensFor,
} from '../../harness/recovery-kit.ts';
import { json } from '../../harness/signin-driver.ts';
import { codeOf, PASSWORD, passwordSignIn, type Row, rows } from '../../harness/signin-kit.ts';
import { oauthPost } from '../../harness/token-kit.ts';

const BOB = 'bob@example.com';

async function setup(t: Parameters<typeof recoverySetup>[0]) {
  const s = await recoverySetup(t);
  const { h, realm } = s;
  const adminToken = (await tokensFor(s, s.adminAudience, 'totp')).access_token;
  const admin = (method: string, path: string, body?: unknown) => bearer(s, adminToken, method, path, body);
  const bob = await h.createUser(realm, { email: BOB, password: PASSWORD });
  const last = async () =>
    Number((await rows(h, 'select coalesce(max(seq), 0) as n from revocation_log'))[0]?.n ?? 0);
  /** The records of `kind` this realm's log gained while `change` ran. */
  const appended = async (kind: string, change: () => Promise<unknown>): Promise<Row[]> => {
    const from = await last();
    await change();
    return (
      await rows(
        h,
        'select record from revocation_log where realm_id = $1 and kind = $2 and seq > $3 order by seq',
        [realm.id, kind, from],
      )
    ).map((r) => r.record);
  };
  /** Bob's tokens for the account API after a password sign-in (he has no second factor). */
  const bobTokens = async (password = PASSWORD) => {
    const { tx, state } = await passwordSignIn(h, realm.name, 'web-app', BOB, password, {
      resource: [s.accountAudience],
    });
    assert.equal(state.body.status, 'completed', JSON.stringify(state.body));
    const res = await redeem(
      s,
      { code: codeOf(state.body.redirect_to), verifier: tx.verifier },
      s.accountAudience,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as { access_token: string; refresh_token: string };
  };
  return { ...s, admin, bob, appended, bobTokens };
}

const one = (records: Row[], what: string): Row => {
  assert.equal(records.length, 1, `${what}: ${JSON.stringify(records)}`);
  return records[0] as Row;
};
const familyOf = async (s: RecoverySetup, sessionId: string) =>
  (
    await rows(s.h, 'select id from refresh_families where realm_id = $1 and session_id = $2', [
      s.realm.id,
      sessionId,
    ])
  )[0]?.id as string;

test('revocation: a session ended at DELETE /me/sessions/{id}, a jti at the revocation endpoint, a client and a service principal disabled', async (t) => {
  const s = await setup(t);
  const tokens = await tokensFor(s, s.accountAudience, 'totp');
  const sid = String(decodeJwt(tokens.access_token).sid);
  const ended = one(
    await s.appended('revocation', async () =>
      assert.equal((await bearer(s, tokens.access_token, 'DELETE', `/me/sessions/${sid}`)).status, 204),
    ),
    'session',
  );
  assert.deepEqual([ended.target, ended.session_id, ended.user_id], ['session', sid, s.userId]);

  const other = await tokensFor(s, s.accountAudience, 'totp');
  const jti = String(decodeJwt(other.access_token).jti);
  const revoked = one(
    await s.appended('revocation', async () =>
      assert.equal(
        (await oauthPost(s.h, s.realm, 'revoke', { token: other.access_token }, s.creds)).status,
        200,
      ),
    ),
    'jti',
  );
  assert.deepEqual([revoked.target, revoked.jti], ['jti', jti]);

  // The principal first: disabling web-app ends the administrator's token too.
  const principal = await s.admin('POST', '/service-principals', { name: 'Deployer' });
  assert.equal(principal.status, 201, JSON.stringify(principal.body));
  const off = one(
    await s.appended('revocation', async () =>
      assert.equal((await s.admin('POST', `/service-principals/${principal.body.id}/disable`)).status, 200),
    ),
    'service principal',
  );
  assert.deepEqual(
    [off.target, off.service_principal_id, off.state],
    ['service_principal', principal.body.id, 'disabled'],
  );

  const disabled = one(
    await s.appended('revocation', async () =>
      assert.equal((await s.admin('POST', '/clients/web-app/disable')).status, 200),
    ),
    'client',
  );
  assert.deepEqual([disabled.target, disabled.client_id, disabled.state], ['client', 'web-app', 'disabled']);
});

test('tombstone: DELETE /users/{id} erases the account', async (t) => {
  const s = await setup(t);
  assert.deepEqual(
    await s.appended('tombstone', async () =>
      assert.equal((await s.admin('DELETE', `/users/${s.bob.id}x`)).status, 404),
    ),
    [],
    'a refused deletion appends nothing',
  );
  const r = one(
    await s.appended('tombstone', async () =>
      assert.equal((await s.admin('DELETE', `/users/${s.bob.id}`)).status, 204),
    ),
    'tombstone',
  );
  assert.equal(r.user_id, s.bob.id);
});

test('key_compromised: an emergency rotation at POST /signing-key-rotations', async (t) => {
  const s = await setup(t);
  let previous = '';
  const records = await s.appended('key_compromised', async () => {
    const r = await s.admin('POST', '/signing-key-rotations', { mode: 'emergency', reason: 'leaked' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    previous = r.body.previous_kid;
  });
  // The key itself, and the key-wide revocation row of the rotation (document 2's table names both).
  assert.equal(
    one(
      records.filter((r) => r.kid !== undefined),
      'the key',
    ).kid,
    previous,
  );
  assert.equal(
    one(
      records.filter((r) => r.target === 'jti'),
      'the key-wide row',
    ).token_kind,
    'key',
  );
  assert.equal(records.length, 2);
});

test('user_state: POST /users/{id}/suspend, then reactivate', async (t) => {
  const s = await setup(t);
  const suspended = one(
    await s.appended('user_state', async () =>
      assert.equal((await s.admin('POST', `/users/${s.bob.id}/suspend`, { reason: 'abuse' })).status, 200),
    ),
    'suspend',
  );
  assert.deepEqual([suspended.user_id, suspended.state], [s.bob.id, 'suspended']);
  const back = one(
    await s.appended('user_state', async () =>
      assert.equal(
        (await s.admin('POST', `/users/${s.bob.id}/reactivate`, { reason: 'appeal' })).status,
        200,
      ),
    ),
    'reactivate',
  );
  assert.deepEqual([back.user_id, back.state], [s.bob.id, 'active']);
});

test('invitation_consumed: an invitation sent at POST /organizations/{org}/invitations, declined at POST /me/invitations/{id}/decline', async (t) => {
  const s = await setup(t);
  const org = await seedOrganization(s.h, s.realm);
  const sent = await s.admin('POST', `/organizations/${org}/invitations`, { user_id: s.bob.id });
  assert.equal(sent.status, 201, JSON.stringify(sent.body));
  const bob = await s.bobTokens();
  const r = one(
    await s.appended('invitation_consumed', async () => {
      const d = await bearer(s, bob.access_token, 'POST', `/me/invitations/${sent.body.id}/decline`);
      assert.equal(d.status, 200, JSON.stringify(d.body));
    }),
    'declined',
  );
  assert.deepEqual([r.organization_id, r.user_id, r.from], [org, s.bob.id, 'invited']);
  assert.equal(typeof r.membership_id, 'string');
});

test('password_changed: POST /me/password; a refused change appends nothing', async (t) => {
  const s = await setup(t);
  const bob = await s.bobTokens();
  const change = (current: string) =>
    bearer(s, bob.access_token, 'POST', '/me/password', {
      current_password: current,
      new_password: 'an-entirely-new-one-8',
    });
  assert.deepEqual(
    await s.appended('password_changed', async () =>
      assert.equal((await change('not-it-at-all')).status, 422),
    ),
    [],
  );
  s.clock.advance(1000);
  const r = one(
    await s.appended('password_changed', async () => assert.equal((await change(PASSWORD)).status, 200)),
    'changed',
  );
  assert.deepEqual([r.user_id, r.compromised], [s.bob.id, false]);
});

test('client_credential_revoked: DELETE /clients/{id}/secrets/{secret}', async (t) => {
  const s = await setup(t);
  const issued = await s.admin('POST', '/clients/web-app/secrets', {});
  assert.equal(issued.status, 201, JSON.stringify(issued.body));
  const r = one(
    await s.appended('client_credential_revoked', async () =>
      assert.equal((await s.admin('DELETE', `/clients/web-app/secrets/${issued.body.id}`)).status, 204),
    ),
    'secret',
  );
  assert.equal(r.secret_id, issued.body.id);
});

test('membership_state: DELETE /organizations/{org}/members/{id}', async (t) => {
  const s = await setup(t);
  const org = await seedOrganization(s.h, s.realm);
  const member = await seedMembership(s.h, s.realm, org, s.bob.id, 'active');
  const r = one(
    await s.appended('membership_state', async () => {
      const d = await s.admin('DELETE', `/organizations/${org}/members/${member}`);
      assert.ok(d.status < 300, JSON.stringify(d.body));
    }),
    'removed',
  );
  assert.deepEqual([r.membership_id, r.user_id, r.from, r.state], [member, s.bob.id, 'active', 'removed']);
});

test('refresh_rotated and refresh_family_revoked: a refresh, then the revocation endpoint', async (t) => {
  const s = await setup(t);
  const tokens = await tokensFor(s, s.accountAudience, 'totp');
  const family = await familyOf(s, String(decodeJwt(tokens.access_token).sid));
  let next = '';
  const rotated = one(
    await s.appended('refresh_rotated', async () => {
      const r = await refresh(s, tokens.refresh_token, s.accountAudience);
      assert.equal(r.status, 200, JSON.stringify(r.body));
      next = r.body.refresh_token;
    }),
    'rotated',
  );
  assert.equal(rotated.family_id, family);
  assert.ok(typeof rotated.token_digest === 'string' && !rotated.token_digest.includes(tokens.refresh_token));
  const revoked = one(
    await s.appended('refresh_family_revoked', async () =>
      assert.equal((await oauthPost(s.h, s.realm, 'revoke', { token: next }, s.creds)).status, 200),
    ),
    'family',
  );
  assert.deepEqual([revoked.family_id, revoked.user_id], [family, s.userId]);
});

test('grant_revoked: suspending the account revokes its grant', async (t) => {
  const s = await setup(t);
  await s.bobTokens();
  const [grant] = await rows(s.h, 'select id from oauth_grants where realm_id = $1 and user_id = $2', [
    s.realm.id,
    s.bob.id,
  ]);
  assert.ok(grant, 'the sign-in left a grant');
  const r = one(
    await s.appended('grant_revoked', async () =>
      assert.equal((await s.admin('POST', `/users/${s.bob.id}/suspend`, { reason: 'abuse' })).status, 200),
    ),
    'grant',
  );
  assert.deepEqual([r.grant_id, r.user_id], [grant.id, s.bob.id]);
});

test('recovery_code_consumed and recovery_codes_replaced: a sign-in with a code, then a new batch', async (t) => {
  const s = await setup(t);
  const code = s.recoveryCodes[0] as string;
  const spent = one(
    await s.appended('recovery_code_consumed', async () => {
      assert.equal(
        (await redeem(s, await recoveryCodeSignIn(s, s.accountAudience), s.accountAudience)).status,
        200,
      );
    }),
    'spent',
  );
  assert.equal(spent.user_id, s.userId);
  assert.ok(typeof spent.code_digest === 'string' && !spent.code_digest.includes(code.replaceAll('-', '')));
  const strong = await tokensFor(s, s.accountAudience, 'totp');
  const replaced = one(
    await s.appended('recovery_codes_replaced', async () => {
      const r = await bearer(s, strong.access_token, 'POST', '/me/recovery-codes/regenerate', {});
      assert.equal(r.status, 200, JSON.stringify(r.body));
    }),
    'batch',
  );
  assert.equal(replaced.user_id, s.userId);
  assert.equal(typeof replaced.batch_id, 'string');
});

test('hotp_counter: a sign-in with an HOTP code moves the counter', async (t) => {
  const s = await setup(t);
  await s.h.setPolicy(s.realm, { mfa: { allowed_factors: ['totp', 'hotp', 'recovery_code'] } });
  const strong = await tokensFor(s, s.accountAudience, 'totp');
  const enrolled = await bearer(s, strong.access_token, 'POST', '/me/hotp/enroll', {});
  assert.equal(enrolled.status, 201, JSON.stringify(enrolled.body));
  const secret = decodeBase32(enrolled.body.secret as string);
  assert.equal(
    (await bearer(s, strong.access_token, 'POST', '/me/hotp/activate', { code: hotp(secret, 3) })).status,
    200,
  );
  const [credential] = await rows(
    s.h,
    'select id, counter from hotp_credentials where realm_id = $1 and user_id = $2',
    [s.realm.id, s.userId],
  );
  const r = one(
    await s.appended('hotp_counter', async () => {
      const { tx } = await passwordSignIn(s.h, s.realm.name, 'web-app', 'alice@example.com', PASSWORD);
      assert.equal((await tx.step('hotp', { code: hotp(secret, 5) })).body.status, 'completed');
    }),
    'counter',
  );
  assert.deepEqual([r.user_id, r.credential_id], [s.userId, credential?.id]);
  assert.ok(Number(r.counter) > Number(credential?.counter), JSON.stringify([r, credential]));
});

test('automation_credential_revoked: DELETE /api-keys/{id}', async (t) => {
  const s = await setup(t);
  const principal = await s.admin('POST', '/service-principals', { name: 'Deployer' });
  assert.equal(principal.status, 201, JSON.stringify(principal.body));
  const key = await s.admin('POST', '/api-keys', { service_principal_id: principal.body.id, name: 'ci' });
  assert.equal(key.status, 201, JSON.stringify(key.body));
  const r = one(
    await s.appended('automation_credential_revoked', async () =>
      assert.equal((await s.admin('DELETE', `/api-keys/${key.body.id}`)).status, 204),
    ),
    'key',
  );
  assert.deepEqual(
    [r.credential, r.credential_id, r.service_principal_id],
    ['api_key', key.body.id, principal.body.id],
  );
});

test('initial_access_token and registration_token_rotated: a registration with an initial access token, a read at its registration_client_uri, the token revoked', async (t) => {
  const s = await setup(t);
  await s.h.setPolicy(s.realm, { client_registration: { enabled: true } });
  const iat = await s.admin('POST', '/initial-access-tokens', {});
  assert.equal(iat.status, 201, JSON.stringify(iat.body));
  let first: Record<string, string> = {};
  const used = one(
    await s.appended('initial_access_token', async () => {
      const r = await json(
        await s.h.get(`/realms/${s.realm.name}/oauth/register`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${iat.body.token}` },
          body: JSON.stringify({ redirect_uris: ['https://rp.example.com/cb'], client_name: 'Registered' }),
        }),
      );
      assert.equal(r.status, 201, JSON.stringify(r.body));
      first = r.body;
    }),
    'used',
  );
  assert.deepEqual([used.token_id, used.uses], [iat.body.id, 1]);
  const [client] = await rows(s.h, 'select id from clients where realm_id = $1 and client_id = $2', [
    s.realm.id,
    first.client_id,
  ]);
  const rotated = one(
    await s.appended('registration_token_rotated', async () => {
      const r = await s.h.get(new URL(first.registration_client_uri ?? '').pathname, {
        headers: { authorization: `Bearer ${first.registration_access_token}` },
      });
      assert.equal(r.status, 200);
    }),
    'rotated',
  );
  assert.equal(rotated.client_row_id, client?.id);
  assert.equal(JSON.stringify(rotated).includes(first.registration_access_token ?? '-'), false);
  const revoked = one(
    await s.appended('initial_access_token', async () =>
      assert.equal((await s.admin('DELETE', `/initial-access-tokens/${iat.body.id}`)).status, 204),
    ),
    'revoked',
  );
  assert.equal(revoked.token_id, iat.body.id);
  assert.notEqual(revoked.revoked_at, null);
});
