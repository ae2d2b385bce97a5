// The bootstrap use case in process: what identity-cli bootstrap and `proudauth dev` both call.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { verify } from '@node-rs/argon2';
import { type BootstrapDeps, bootstrapAdministrator } from '../../../src/setup/bootstrap.service.ts';
import { type Harness, startHarness, uniqueRealmName } from '../../harness/harness.ts';

const depsOf = (h: Harness): BootstrapDeps => ({
  db: h.ctx.db,
  keyring: h.ctx.keyring!,
  hasher: h.ctx.hasher,
  signingAlgorithm: h.ctx.config.keys.signingAlgorithm,
  clock: h.ctx.clock,
});

const countRealms = async (h: Harness) =>
  Number((await h.ctx.db.query<{ n: string }>('select count(*) as n from realms')).rows[0]?.n);

describe('users › bootstrap', () => {
  test('case=an existing realm gets its administrator without a second realm', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    const realms = await countRealms(h);
    const r = await bootstrapAdministrator(depsOf(h), {
      realm: realm.name,
      email: 'owner@example.com',
      password: 'a-long-enough-password',
    });
    assert.equal(r.realmCreated, false);
    assert.equal(r.realm.id, realm.id);
    assert.equal(await countRealms(h), realms);
  });

  test('case=with a pepper configured the verifier is peppered and records the version', async (t) => {
    const pepper = randomBytes(32).toString('base64');
    const h = await startHarness(t, {
      overrides: { 'keys.pepper.1': pepper, 'keys.pepper_active_version': 1 },
    });
    const password = 'peppered-password-1';
    const r = await bootstrapAdministrator(depsOf(h), {
      realm: uniqueRealmName(),
      email: 'pepper@example.com',
      password,
    });
    const [cred] = (
      await h.ctx.db.query<{ hash: string; pepper_version: number | null }>(
        'select hash, pepper_version from password_credentials where realm_id = $1 and user_id = $2',
        [r.realm.id, r.userId],
      )
    ).rows;
    assert.ok(cred);
    assert.equal(Number(cred.pepper_version), 1);
    assert.ok(cred.hash.startsWith('$argon2id$'));
    // The stored hash is of the peppered password: the bare password does not verify against it.
    assert.equal(await verify(cred.hash, password), false);
    assert.equal(await h.ctx.hasher.verify(password, { hash: cred.hash, pepperVersion: 1 }), true);
    assert.equal(await h.ctx.hasher.verify('wrong-password-1', { hash: cred.hash, pepperVersion: 1 }), false);
  });

  test('case=invalid input is refused before anything is written', async (t) => {
    const h = await startHarness(t);
    const realms = await countRealms(h);
    const name = uniqueRealmName();
    await assert.rejects(
      bootstrapAdministrator(depsOf(h), { realm: name, email: 'not-an-email', password: 'long-enough-pass' }),
      /invalid email address/,
    );
    await assert.rejects(
      bootstrapAdministrator(depsOf(h), { realm: name, email: 'x@example.com', password: 'x'.repeat(11) }),
      /at least 12 characters/,
    );
    await assert.rejects(
      bootstrapAdministrator(depsOf(h), { realm: name, email: 'x@example.com', password: 'é'.repeat(513) }),
      /at most 1024 bytes/,
    );
    assert.equal(await countRealms(h), realms);
  });
});
