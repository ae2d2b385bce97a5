// Abuse budgets (spec doc 1, Errors 429 rate_limited; docs/security.md, "Abuse budgets"): failed
// proofs per account across transactions and processes, attempts per network, the token
// endpoint's per-client budget (slow_down), the metric, and that a budget slows and never locks.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { startHarness } from '../../harness/harness.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import { movableClock, PASSWORD, REDIRECT, signinSetup } from '../../harness/signin-kit.ts';
import { oauthPost, seedGrant, seedResource, seedServiceClient } from '../../harness/token-kit.ts';

const wrongPasswordTx = async (h: Parameters<typeof startHeadless>[0], realm: string) => {
  const tx = await startHeadless(h, realm, 'web-app', REDIRECT);
  await tx.step('identify', { identifier: 'alice@example.com' });
  return tx;
};

async function metricValue(
  h: { ctx: { metrics: { registry: { metrics(): Promise<string> } } } },
  surface: string,
) {
  const text = await h.ctx.metrics.registry.metrics();
  const line = text.split('\n').find((l) => l.startsWith(`service_rate_limited_total{surface="${surface}"}`));
  return line ? Number(line.split(' ').at(-1)) : 0;
}

describe('abuse budgets', () => {
  test('case=20 wrong passwords across 4 transactions, then the right one, is slowed/mode=headless', async (t: TestContext) => {
    const clock = movableClock();
    const { h, realm } = await signinSetup(t, { clock });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const tx = await wrongPasswordTx(h, realm.name);
      for (let j = 0; j < 5; j++)
        statuses.push((await tx.step('password', { password: `wrong-${i}-${j}` })).status);
    }
    assert.equal(
      statuses.filter((s) => s === 200).length,
      10,
      `the default budget: 10 failures (${statuses})`,
    );
    assert.equal(statuses.filter((s) => s === 429).length, 10);
    const tx = await wrongPasswordTx(h, realm.name);
    const right = await tx.step('password', { password: PASSWORD });
    assert.equal(right.status, 429, JSON.stringify(right.body));
    assert.equal(right.body.code, 'rate_limited');
    const retry = Number(right.headers.get('retry-after'));
    assert.ok(retry > 0 && retry <= 15 * 60, `Retry-After ${retry}`);
    assert.ok((await metricValue(h, 'signin')) >= 11);
    // Slowed, not locked: once the window has passed the owner signs in.
    clock.advance(retry * 1000);
    const later = await wrongPasswordTx(h, realm.name);
    assert.equal((await later.step('password', { password: PASSWORD })).body.status, 'completed');
  });

  test('case=successful sign-ins do not use the account budget/mode=headless', async (t: TestContext) => {
    const { h, realm } = await signinSetup(t, { overrides: { 'security.budgets.account_failures': 2 } });
    for (let i = 0; i < 4; i++) {
      const tx = await wrongPasswordTx(h, realm.name);
      assert.equal((await tx.step('password', { password: PASSWORD })).body.status, 'completed');
    }
  });

  test('case=two processes on one database share the account budget under concurrency/mode=headless', async (t: TestContext) => {
    const { h, realm } = await signinSetup(t);
    const other = await startHarness(t, { db: h.ctx.db });
    // 8 transactions, 4 wrong passwords each, all at once, half through each process.
    const txs = await Promise.all(
      Array.from({ length: 8 }, (_, i) => wrongPasswordTx(i % 2 === 0 ? h : other, realm.name)),
    );
    const results = await Promise.all(
      txs.flatMap((tx, i) =>
        Array.from({ length: 4 }, (_, j) => tx.step('password', { password: `wrong-${i}-${j}` })),
      ),
    );
    const checked = results.filter((r) => r.status === 200).length;
    const limited = results.filter((r) => r.status === 429).length;
    t.diagnostic(`checked ${checked}, refused ${limited} of ${results.length}`);
    assert.equal(
      checked + limited,
      results.length,
      JSON.stringify(results.find((r) => r.status !== 200 && r.status !== 429)?.body),
    );
    assert.equal(checked, 10, 'exactly the budget was checked, whichever process answered');
  });

  test('case=the per-network budget counts every attempt/mode=headless', async (t: TestContext) => {
    const { h, realm } = await signinSetup(t, {
      overrides: { 'security.budgets.network_attempts': 3, 'security.budgets.account_failures': 0 },
    });
    // The network bucket spans realms (and earlier runs on this database): start it afresh.
    await h.ctx.db.query("delete from abuse_counters where bucket like 'signin:net:%'");
    const tx = await wrongPasswordTx(h, realm.name);
    const statuses = [];
    for (let i = 0; i < 4; i++) statuses.push((await tx.step('password', { password: `wrong-${i}` })).status);
    assert.deepEqual(statuses, [200, 200, 200, 429]);
  });

  test('case=the token endpoint answers slow_down past the client budget/mode=headless', async (t: TestContext) => {
    const h = await startHarness(t, { overrides: { 'security.budgets.client_token_requests': 5 } });
    const realm = await h.createRealm();
    const { client, creds } = await seedServiceClient(h, realm, 'svc');
    const res = await seedResource(h, realm, {
      audience: 'https://orders.example.com',
      scopes: ['orders:read'],
    });
    await seedGrant(h, realm, client, res, { scopes: ['orders:read'], subjectTypes: ['service_principal'] });
    const answers = [];
    for (let i = 0; i < 7; i++)
      answers.push(await oauthPost(h, realm, 'token', { grant_type: 'client_credentials' }, creds));
    assert.deepEqual(
      answers.map((a) => a.status),
      [200, 200, 200, 200, 200, 429, 429],
    );
    assert.equal(answers[5]?.body.error, 'slow_down');
    assert.ok(Number(answers[5]?.headers.get('retry-after')) > 0);
    assert.ok((await metricValue(h, 'token')) >= 2);
  });
});
