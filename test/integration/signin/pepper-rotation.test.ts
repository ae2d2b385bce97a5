// Pepper rotation (spec doc 2, Key custody / Authentication 6): a verifier made under an older
// pepper version, or none, is re-peppered under the active version at the next successful
// password sign-in; a wrong password changes nothing.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { startHarness } from '../../harness/harness.ts';
import { PASSWORD, passwordSignIn, rows, signinSetup } from '../../harness/signin-kit.ts';

const key = () => randomBytes(32).toString('base64');

describe('sign-in › pepper rotation', () => {
  test('case=verifiers move to the active pepper version at the next sign-in/mode=headless', async (t) => {
    const v1 = key();
    const v2 = key();
    // The account is created without a pepper, then the operator adds version 1, then 2.
    const { h, realm, user } = await signinSetup(t);
    const stored = async () =>
      (
        await rows(
          h,
          'select hash, pepper_version from password_credentials where realm_id = $1 and user_id = $2',
          [realm.id, user.id],
        )
      )[0];
    const before = await stored();
    assert.equal(before?.pepper_version, null);

    const withV1 = await startHarness(t, {
      db: h.ctx.db,
      overrides: { 'keys.pepper.1': v1, 'keys.pepper_active_version': 1 },
    });
    const wrong = await passwordSignIn(
      withV1,
      realm.name,
      'web-app',
      'alice@example.com',
      'not-the-password',
    );
    assert.equal(wrong.state.body.status, 'pending');
    assert.equal((await stored())?.hash, before?.hash, 'a wrong password re-peppers nothing');
    assert.equal(
      (await passwordSignIn(withV1, realm.name, 'web-app', 'alice@example.com')).state.body.status,
      'completed',
    );
    const peppered = await stored();
    assert.equal(Number(peppered?.pepper_version), 1);
    assert.notEqual(peppered?.hash, before?.hash);

    const withV2 = await startHarness(t, {
      db: h.ctx.db,
      overrides: { 'keys.pepper.1': v1, 'keys.pepper.2': v2, 'keys.pepper_active_version': 2 },
    });
    assert.equal(
      (await passwordSignIn(withV2, realm.name, 'web-app', 'alice@example.com')).state.body.status,
      'completed',
    );
    assert.equal(Number((await stored())?.pepper_version), 2);
    // Still the same password, now under version 2 only.
    const again = await passwordSignIn(withV2, realm.name, 'web-app', 'alice@example.com', PASSWORD);
    assert.equal(again.state.body.status, 'completed');
    assert.equal(
      await withV2.ctx.hasher.verify(PASSWORD, { hash: (await stored())?.hash, pepperVersion: 2 }),
      true,
    );
  });
});
