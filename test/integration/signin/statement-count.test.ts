// How many SQL statements a headless password sign-in costs, step by step, from the transaction's
// start to the code exchanged at the token endpoint (issue 37: at most 20 in all). Counted by a
// decorator around the database port (test/harness/statement-counter.ts) the same way bench/run.ts
// counts with pg_stat_statements: `begin` and `commit` are statements. The configuration is the
// benchmark's where it changes the work: the per-network attempt budget is spent (out of reach),
// and the per-network failed client authentication budget is at its default. The clock stands
// still, so what a process keeps for a second (the realm by name, the maintenance state) is kept
// for the whole test, as it is for nearly every request of a loaded server.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startHeadless } from '../../harness/signin-driver.ts';
import { codeOf, movableClock, PASSWORD, REDIRECT, signinSetup } from '../../harness/signin-kit.ts';
import { countingDb } from '../../harness/statement-counter.ts';
import { fileDatabase } from '../../harness/test-db.ts';
import { clientSecret, oauthPost } from '../../harness/token-kit.ts';

/** The most each step may cost today; the sum is the ceiling. */
const CEILING = { start: 5, identify: 7, password: 8, token: 7 };
const TOTAL_CEILING = 27;

describe('sign-in › statement count', () => {
  test('case=a password sign-in from start to code stays within its statement budget/mode=headless', async (t) => {
    const counting = countingDb(await fileDatabase());
    const { h, realm, client } = await signinSetup(t, {
      db: counting.db,
      clock: movableClock(),
      overrides: {
        'security.budgets.network_attempts': 1_000_000,
        'security.budgets.network_auth_failures': 60,
      },
      user: null,
    });
    const secret = await clientSecret(h, realm, client);
    for (const n of [1, 2]) {
      await h.createUser(realm, { email: `user${n}@example.com`, username: `user${n}`, password: PASSWORD });
    }

    const signIn = async (email: string) => {
      const steps: Record<string, string[]> = {};
      counting.log.take();
      const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
      steps.start = counting.log.take();
      const identified = await tx.step('identify', { identifier: email });
      assert.equal(identified.status, 200, JSON.stringify(identified.body));
      steps.identify = counting.log.take();
      const done = await tx.step('password', { password: PASSWORD });
      assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
      steps.password = counting.log.take();
      const token = await oauthPost(
        h,
        realm,
        'token',
        {
          grant_type: 'authorization_code',
          code: codeOf(done.body.redirect_to),
          redirect_uri: REDIRECT,
          code_verifier: tx.verifier,
        },
        { clientId: 'web-app', secret },
      );
      assert.equal(token.status, 200, JSON.stringify(token.body));
      assert.ok(token.body.id_token);
      steps.token = counting.log.take();
      return steps;
    };

    // The first sign-in fills what the process keeps (client configuration, keys); the second is
    // what a running server pays per sign-in, as the benchmark measures it.
    await signIn('user1@example.com');
    const steps = await signIn('user2@example.com');
    const counts = Object.fromEntries(Object.entries(steps).map(([k, v]) => [k, v.length]));
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    t.diagnostic(`statements per step: ${JSON.stringify(counts)}, total ${total}`);
    for (const [step, sql] of Object.entries(steps)) {
      t.diagnostic(`${step}:\n  ${sql.map((s) => s.slice(0, 160)).join('\n  ')}`);
    }
    for (const [step, ceiling] of Object.entries(CEILING)) {
      assert.ok(
        (counts[step] ?? 0) <= ceiling,
        `${step}: ${counts[step]} statements, at most ${ceiling}:\n${steps[step]?.join('\n')}`,
      );
    }
    assert.ok(total <= TOTAL_CEILING, `${total} statements from start to code, at most ${TOTAL_CEILING}`);
  });
});
