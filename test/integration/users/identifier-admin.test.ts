// Identifier administration and scheduled deactivation through the administration API (document 1
// "Recovery and account administration"): every success with its audit reason and every refusal
// with its status, problem code and the permission it needs.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { describe, test } from 'node:test';
import type { RealmRow } from '../../../src/realms/index.ts';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { audits, rows, userRow } from '../../harness/signin-kit.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read member by member
type Body = any;

async function setup(t: TestContext) {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  return { h, realm, admin };
}

async function answer(res: Response): Promise<[number, Body]> {
  const text = await res.text();
  return [res.status, text ? JSON.parse(text) : null];
}

/** A caller holding a realm role with exactly these permissions. */
async function callerWith(h: Harness, realm: RealmRow, admin: ApiCallerKit, permissions: string[]) {
  const name = `r${Math.random().toString(36).slice(2, 10)}`;
  const r = await admin.call('POST', '/roles', { name, permissions });
  assert.equal(r.status, 201);
  return apiCaller(h, realm, { roles: [name] });
}

describe('users › identifier administration', () => {
  test('case=add, verify by override and make primary, each audited with its reason', async (t) => {
    const { h, realm, admin } = await setup(t);
    const alice = await h.createUser(realm, { email: 'alice@example.com', emailVerified: true });
    const [status, added] = await answer(
      await admin.call('POST', `/users/${alice.id}/identifiers`, {
        type: 'email',
        value: 'Alice.Work@Example.com',
        reason: 'ticket 41',
      }),
    );
    assert.equal(status, 201);
    assert.match(added.id, /^idf_/);
    assert.deepEqual(
      { ...added, id: undefined },
      { id: undefined, type: 'email', value: 'Alice.Work@Example.com', verified: false, primary: false },
    );

    const [unverified, refusal] = await answer(
      await admin.call('POST', `/users/${alice.id}/identifiers/${added.id}/primary`, { reason: 'move' }),
    );
    assert.deepEqual([unverified, refusal.code], [422, 'validation_failed']);

    const [overridden, verified] = await answer(
      await admin.call('POST', `/users/${alice.id}/verification-overrides`, {
        identifier_id: added.id,
        reason: 'checked by phone',
      }),
    );
    assert.deepEqual([overridden, verified.verified, verified.primary], [200, true, false]);

    const [made, primary] = await answer(
      await admin.call('POST', `/users/${alice.id}/identifiers/${added.id}/primary`, { reason: 'new job' }),
    );
    assert.deepEqual([made, primary.primary], [200, true]);
    const [, user] = await answer(await admin.call('GET', `/users/${alice.id}`));
    const emails = user.identifiers.filter((i: Body) => i.type === 'email');
    assert.deepEqual(
      emails.map((i: Body) => [i.value, i.primary]).sort(),
      [
        ['Alice.Work@Example.com', true],
        ['alice@example.com', false],
      ],
      'one primary per type',
    );

    const reasons = async (type: string) =>
      (await audits(h, realm, type)).map((a) => [a.reason, a.actor_id, a.target_id]);
    assert.deepEqual(await reasons('user.identifier.added'), [['ticket 41', admin.userId, added.id]]);
    assert.deepEqual(await reasons('user.identifier.verification_overridden'), [
      ['checked by phone', admin.userId, added.id],
    ]);
    assert.deepEqual(await reasons('user.identifier.primary_set'), [['new job', admin.userId, added.id]]);
    const [again] = await answer(
      await admin.call('POST', `/users/${alice.id}/identifiers/${added.id}/primary`, { reason: 'again' }),
    );
    assert.equal(again, 200);
    assert.equal((await audits(h, realm, 'user.identifier.primary_set')).length, 1, 'no change, no record');
  });

  test('case=an identifier another account holds is 409, verified or not; bad values are 422', async (t) => {
    const { h, realm, admin } = await setup(t);
    const alice = await h.createUser(realm, { email: 'alice@example.com', emailVerified: true });
    const bob = await h.createUser(realm, { email: 'bob@example.com' });
    const add = (userId: string, body: Record<string, unknown>) =>
      admin.call('POST', `/users/${userId}/identifiers`, { reason: 'r', ...body });

    const cases: [string, Record<string, unknown>, number, string][] = [
      [alice.id, { type: 'email', value: 'BOB@example.com' }, 409, 'conflict'],
      [bob.id, { type: 'email', value: 'Alice@Example.com' }, 409, 'conflict'],
      [alice.id, { type: 'email', value: 'alice@example.com' }, 409, 'conflict'],
      [alice.id, { type: 'phone', value: '0301234567' }, 422, 'validation_failed'],
      [alice.id, { type: 'email', value: 'not an address' }, 422, 'validation_failed'],
      [alice.id, { type: 'fax', value: '+4930123456' }, 422, 'validation_failed'],
      [alice.id, { type: 'username', value: 'alice', reason: '' }, 422, 'validation_failed'],
      [alice.id, { type: 'username', value: 'alice', verified: true }, 400, 'invalid_request'],
      [`usr_${'0'.repeat(26)}`, { type: 'username', value: 'alice' }, 404, 'not_found'],
    ];
    for (const [userId, body, status, code] of cases) {
      const [got, problem] = await answer(await add(userId, body));
      assert.deepEqual([got, problem.code], [status, code], JSON.stringify(body));
    }
    const [, missingReason] = await answer(
      await admin.call('POST', `/users/${alice.id}/identifiers`, { type: 'username', value: 'alice' }),
    );
    assert.equal(missingReason.status, 422);
    assert.deepEqual(
      (
        await rows(h, 'select type, value from user_identifiers where realm_id = $1 order by value', [
          realm.id,
        ])
      )
        .filter((r) => r.value === 'alice' || r.type === 'phone')
        .map((r) => r.value),
      [],
      'nothing refused was written',
    );
    assert.equal((await audits(h, realm, 'user.identifier.added')).length, 0);
  });

  test('case=override and primary refuse what the rules forbid', async (t) => {
    const { h, realm, admin } = await setup(t);
    const alice = await h.createUser(realm, { email: 'alice@example.com' });
    const bob = await h.createUser(realm, { email: 'bob@example.com' });
    const idOf = async (userId: string) =>
      String(
        (
          await rows(h, 'select id from user_identifiers where realm_id = $1 and user_id = $2', [
            realm.id,
            userId,
          ])
        )[0]?.id,
      );
    const aliceEmail = await idOf(alice.id);
    const bobEmail = await idOf(bob.id);
    const override = (caller: ApiCallerKit, userId: string, body: Record<string, unknown>) =>
      caller.call('POST', `/users/${userId}/verification-overrides`, { reason: 'r', ...body });

    // Another account's identifier, an unknown one, a malformed one, the administrator's own.
    const other = await answer(await override(admin, alice.id, { identifier_id: bobEmail }));
    assert.deepEqual([other[0], other[1].code], [404, 'not_found']);
    const unknown = await answer(await override(admin, alice.id, { identifier_id: `idf_${'0'.repeat(26)}` }));
    assert.deepEqual([unknown[0], unknown[1].code], [404, 'not_found']);
    const malformed = await answer(await override(admin, alice.id, { identifier_id: 'email' }));
    assert.deepEqual([malformed[0], malformed[1].errors[0].field], [422, 'identifier_id']);
    const ownId = await idOf(admin.userId);
    const own = await answer(await override(admin, admin.userId, { identifier_id: ownId }));
    assert.deepEqual([own[0], own[1].code], [403, 'forbidden']);

    // realm.users.verification.override is its own permission; realm.users.write is not enough.
    const writer = await callerWith(h, realm, admin, ['realm.users.read', 'realm.users.write']);
    const denied = await answer(await override(writer, alice.id, { identifier_id: aliceEmail }));
    assert.equal(denied[0], 403);
    const reader = await callerWith(h, realm, admin, ['realm.users.read']);
    const [addDenied] = await answer(
      await reader.call('POST', `/users/${alice.id}/identifiers`, {
        type: 'username',
        value: 'alice',
        reason: 'r',
      }),
    );
    const [primaryDenied] = await answer(
      await reader.call('POST', `/users/${alice.id}/identifiers/${aliceEmail}/primary`, { reason: 'r' }),
    );
    assert.deepEqual([addDenied, primaryDenied], [403, 403]);
    assert.equal((await audits(h, realm, 'user.identifier.verification_overridden')).length, 0);

    // Primary: another account's identifier and an unknown one are not found; a bad id too.
    for (const id of [bobEmail, `idf_${'1'.repeat(26)}`, 'nope']) {
      const [status] = await answer(
        await admin.call('POST', `/users/${alice.id}/identifiers/${id}/primary`, { reason: 'r' }),
      );
      assert.equal(status, 404, id);
    }

    // An account waiting for its email becomes active when the primary email is vouched for.
    await h.ctx.db.query(
      `update users set state = 'pending_verification', required_actions = '{verify_email}'
        where realm_id = $1 and id = $2`,
      [realm.id, alice.id],
    );
    await h.ctx.db.query(
      'update user_identifiers set verified = false, verified_at = null where realm_id = $1 and id = $2',
      [realm.id, aliceEmail],
    );
    const ok = await answer(await override(admin, alice.id, { identifier_id: aliceEmail }));
    assert.deepEqual([ok[0], ok[1].verified], [200, true]);
    const row = await userRow(h, realm, alice.id);
    assert.deepEqual([row.state, row.required_actions], ['active', []]);
    const verified = await audits(h, realm, 'user.verified');
    assert.deepEqual(
      verified.map((a) => [a.subject_id, a.reason]),
      [[alice.id, 'verification_override']],
    );
    // Overriding a verified identifier again changes and records nothing.
    assert.equal((await answer(await override(admin, alice.id, { identifier_id: aliceEmail })))[0], 200);
    assert.equal((await audits(h, realm, 'user.identifier.verification_overridden')).length, 1);
  });
});

describe('users › identifier removal under /me', () => {
  test('case=removing the primary email promotes a verified one before an older unverified one', async (t) => {
    const { h, realm, admin } = await setup(t);
    const dana = await h.createUser(realm, {
      email: 'dana@example.com',
      emailVerified: true,
      password: 'correct-horse-9',
    });
    const add = async (value: string) => {
      const [status, body] = await answer(
        await admin.call('POST', `/users/${dana.id}/identifiers`, { type: 'email', value, reason: 'r' }),
      );
      assert.equal(status, 201);
      return String(body.id);
    };
    await add('dana.old@example.com');
    const vouched = await add('dana.new@example.com');
    const [overridden] = await answer(
      await admin.call('POST', `/users/${dana.id}/verification-overrides`, {
        identifier_id: vouched,
        reason: 'r',
      }),
    );
    assert.equal(overridden, 200);
    const primaryId = String(
      (
        await rows(h, 'select id from user_identifiers where realm_id = $1 and user_id = $2 and is_primary', [
          realm.id,
          dana.id,
        ])
      )[0]?.id,
    );
    const self = await apiCaller(h, realm, {
      audience: 'account',
      userId: dana.id,
      password: 'correct-horse-9',
    });
    assert.equal((await self.call('DELETE', `/me/identifiers/${primaryId}`)).status, 204);
    const primaries = await rows(
      h,
      'select id from user_identifiers where realm_id = $1 and user_id = $2 and is_primary',
      [realm.id, dana.id],
    );
    assert.deepEqual(
      primaries.map((r) => r.id),
      [vouched],
    );
  });
});

describe('users › scheduled deactivation', () => {
  test('case=schedule, move and cancel, with every refusal', async (t) => {
    const { h, realm, admin } = await setup(t);
    const carol = await h.createUser(realm, { email: 'carol@example.com' });
    const path = `/users/${carol.id}/scheduled-deactivation`;
    const future = (ms: number) => new Date(h.clock.now().getTime() + ms).toISOString();

    const refusals: [string, Record<string, unknown>, number, string][] = [
      [path, { at: future(-1000), reason: 'r' }, 422, 'at'],
      [path, { at: 'tomorrow', reason: 'r' }, 422, 'at'],
      [path, { at: future(3_600_000), reason: '' }, 422, 'reason'],
      [path, { at: future(3_600_000) }, 422, 'reason'],
    ];
    for (const [p, body, status, field] of refusals) {
      const [got, problem] = await answer(await admin.call('PUT', p, body));
      assert.deepEqual(
        [got, problem.errors?.map((e: Body) => e.field)],
        [status, [field]],
        JSON.stringify(body),
      );
    }
    const [unknownUser] = await answer(
      await admin.call('PUT', `/users/usr_${'0'.repeat(26)}/scheduled-deactivation`, {
        at: future(3_600_000),
        reason: 'r',
      }),
    );
    const [self, selfProblem] = await answer(
      await admin.call('PUT', `/users/${admin.userId}/scheduled-deactivation`, {
        at: future(3_600_000),
        reason: 'r',
      }),
    );
    const [noneToCancel] = await answer(await admin.call('DELETE', path));
    assert.deepEqual([unknownUser, self, selfProblem.code, noneToCancel], [404, 403, 'forbidden', 404]);
    const writer = await callerWith(h, realm, admin, ['realm.users.read', 'realm.users.write']);
    const [withoutSuspend] = await answer(
      await writer.call('PUT', path, { at: future(3_600_000), reason: 'r' }),
    );
    assert.equal(withoutSuspend, 403);
    assert.equal((await userRow(h, realm, carol.id)).deactivate_at, null, 'no refusal wrote anything');

    const first = future(3_600_000);
    const second = future(7_200_000);
    assert.equal((await admin.call('PUT', path, { at: first, reason: 'leaves' })).status, 200);
    const moved = await admin.call('PUT', path, { at: second, reason: 'stays an hour longer' });
    assert.equal(moved.status, 200);
    assert.equal(new Date((await userRow(h, realm, carol.id)).deactivate_at as Date).toISOString(), second);
    const [cancelled] = await answer(await admin.call('DELETE', path));
    assert.equal(cancelled, 204);
    assert.equal((await userRow(h, realm, carol.id)).deactivate_at, null);

    const scheduled = await audits(h, realm, 'user.deactivation_scheduled');
    assert.deepEqual(
      scheduled.map((a) => [a.reason, a.data.at, a.data.previous_at]),
      [
        ['leaves', first, null],
        ['stays an hour longer', second, first],
      ],
    );
    const cancels = await audits(h, realm, 'user.deactivation_cancelled');
    assert.deepEqual(
      cancels.map((a) => [a.actor_id, a.data.at]),
      [[admin.userId, second]],
    );
    const [again] = await answer(await admin.call('DELETE', path));
    assert.equal(again, 404);
  });
});
