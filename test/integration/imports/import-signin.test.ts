// Imported credentials at sign-in (docs/migration.md, Password verifiers and TOTP seeds): each
// password verifier format, made by its source system's algorithm (test/fixtures/password-vectors),
// signs its user in through the headless transaction API and is replaced by the realm's Argon2id
// under the pepper in that sign-in; a wrong password changes nothing. Imported TOTP authenticators
// (base32 and raw-string seeds, 6 to 8 digits, other periods, SHA-1/256/512) accept the code that
// oathtool computes, through the real totp step.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { passwordSignIn, rows } from '../../harness/signin-kit.ts';
import {
  emailOfRecord,
  importDoc,
  importNow,
  importSetup,
  storedHash,
  userIdOf,
  userRecord,
  VECTORS,
  type Vector,
} from './import-kit.ts';

const PEPPER = Buffer.alloc(32, 9).toString('base64');

function passwordOf(name: string, v: Vector): Record<string, unknown> {
  if (name.startsWith('bcrypt')) return { format: 'bcrypt', hash: v.hash };
  if (name.startsWith('phc')) return { format: 'phc', hash: v.hash };
  if (name.startsWith('keycloak'))
    return { format: 'keycloak', credential_data: v.credential_data, secret_data: v.secret_data };
  return { format: 'firebase_scrypt', hash: v.hash, salt: v.salt };
}

const oathtool = spawnSync('oathtool', ['--version']).status === 0;

/** The code oathtool (an independent TOTP implementation) shows for a hex seed at an instant. */
function oathtoolCode(
  seed: Buffer,
  at: Date,
  o: { digits: number; period: number; algorithm: string },
): string {
  const r = spawnSync(
    'oathtool',
    [
      `--totp=${o.algorithm.toLowerCase()}`,
      '-d',
      String(o.digits),
      '-s',
      `${o.period}s`,
      '-N',
      `@${Math.floor(at.getTime() / 1000)}`,
      seed.toString('hex'),
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) throw new Error(`oathtool failed: ${r.stderr}`);
  return r.stdout.trim();
}

describe('user import › sign-in', () => {
  test('case=every verifier format signs its user in once and is re-hashed to Argon2id with the pepper/mode=headless', async (t) => {
    const s = await importSetup(t, { 'keys.pepper.1': PEPPER, 'keys.pepper_active_version': 1 });
    const firebase = VECTORS.firebase_scrypt?.parameters as NonNullable<Vector['parameters']>;
    const entries = Object.entries(VECTORS);
    const records = entries.map(([name, v]) => userRecord({ password: passwordOf(name, v) }));
    const { job } = await importNow(
      s,
      importDoc(records, { password_hash_parameters: { firebase_scrypt: firebase } }),
    );
    assert.equal(job.state, 'succeeded', String(job.last_error));
    assert.equal(job.result.counts.imported, entries.length);

    for (const [i, [name, v]] of entries.entries()) {
      const email = emailOfRecord(records[i] as Record<string, unknown>);
      const userId = (await userIdOf(s, email)) as string;
      const imported = await storedHash(s, userId);
      assert.match(imported ?? '', /^\$pa-import\$v1\$/, name);

      const wrong = await passwordSignIn(s.h, s.realm.name, 'web-app', email, `${v.password}-wrong`);
      assert.equal(wrong.state.body.status, 'pending', `${name}: a wrong password is refused`);
      assert.equal(await storedHash(s, userId), imported, `${name}: a wrong password re-hashes nothing`);

      const right = await passwordSignIn(s.h, s.realm.name, 'web-app', email, v.password);
      assert.equal(right.state.body.status, 'completed', `${name}: ${JSON.stringify(right.state.body)}`);
      const [after] = await rows(
        s.h,
        'select hash, pepper_version from password_credentials where realm_id = $1 and user_id = $2',
        [s.realm.id, userId],
      );
      assert.match(after?.hash, /^\$argon2id\$/, `${name}: re-hashed to the realm's Argon2id`);
      assert.equal(after?.pepper_version, 1, `${name}: under the active pepper`);

      const again = await passwordSignIn(s.h, s.realm.name, 'web-app', email, v.password);
      assert.equal(again.state.body.status, 'completed', `${name}: the re-hashed verifier signs in`);
    }
  });

  test('case=imported TOTP authenticators accept the codes oathtool computes/mode=headless', {
    skip: oathtool ? false : 'oathtool is not installed (Debian package oathtool)',
  }, async (t) => {
    const s = await importSetup(t);
    const bcrypt = VECTORS.bcrypt_2b as Vector;
    const seedText = 'kc-raw-secret-0123456';
    const cases = [
      {
        secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP',
        encoding: 'base32',
        digits: 6,
        period: 30,
        algorithm: 'SHA1',
      },
      { secret: seedText, encoding: 'raw', digits: 8, period: 60, algorithm: 'SHA256' },
      {
        secret: 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ',
        encoding: 'base32',
        digits: 7,
        period: 30,
        algorithm: 'SHA512',
      },
    ] as const;
    const records = cases.map((c) =>
      userRecord({ password: { format: 'bcrypt', hash: bcrypt.hash }, totp: { ...c } }),
    );
    const { job } = await importNow(s, importDoc(records, { import_totp: true }));
    assert.equal(job.state, 'succeeded', String(job.last_error));

    for (const [i, c] of cases.entries()) {
      const email = emailOfRecord(records[i] as Record<string, unknown>);
      const seed =
        c.encoding === 'raw'
          ? Buffer.from(c.secret, 'utf8')
          : Buffer.from(
              spawnSync(
                'python3',
                ['-c', `import base64,sys;sys.stdout.write(base64.b32decode('${c.secret}').hex())`],
                {
                  encoding: 'utf8',
                },
              ).stdout,
              'hex',
            );
      const { tx, state } = await passwordSignIn(s.h, s.realm.name, 'web-app', email, bcrypt.password);
      assert.ok(
        state.body.next_actions.some((a: { type: string }) => a.type === 'totp'),
        `${c.algorithm}: the imported authenticator is asked for`,
      );
      const wrongCode = await tx.step('totp', { code: '0'.repeat(c.digits) });
      assert.equal(wrongCode.body.status, 'pending');
      const code = oathtoolCode(seed, s.h.clock.now(), c);
      assert.equal(code.length, c.digits);
      const done = await tx.step('totp', { code });
      assert.equal(
        done.body.status,
        'completed',
        `${c.algorithm}/${c.digits}/${c.period}: ${JSON.stringify(done.body)}`,
      );
      // Without a pepper too, the imported verifier is replaced by the realm's Argon2id.
      assert.match((await storedHash(s, (await userIdOf(s, email)) as string)) ?? '', /^\$argon2id\$/);
    }
  });
});
