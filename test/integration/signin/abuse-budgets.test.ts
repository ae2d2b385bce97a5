// Abuse budgets (spec doc 1, Errors 429 rate_limited; docs/security.md, "Abuse budgets"): failed
// proofs per account across transactions and processes, attempts per network (passwords, emailed
// codes, magic links, challenge answers and every send), the token endpoint's per-client budget
// (slow_down), the metric, and that a budget slows and never locks.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { startHarness } from '../../harness/harness.ts';
import { codeIn, deliverQueued, linkIn, startMailSink } from '../../harness/mail-kit.ts';
import { type JsonResponse, startHeadless } from '../../harness/signin-driver.ts';
import { count, movableClock, PASSWORD, REDIRECT, signinSetup } from '../../harness/signin-kit.ts';
import { RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';
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

const wrongCode = (code: string) => (code === '000000' ? '111111' : '000000');

/**
 * A realm that mails, on a stopped clock (no window ends by accident), with a network budget of
 * three attempts that starts afresh and no account budget.
 */
async function mailingRealm(t: TestContext, extra: { loginUi?: string } = {}) {
  const mail = await startMailSink(t);
  const s = await signinSetup(t, {
    clock: movableClock(),
    overrides: {
      ...mail.overrides,
      'security.budgets.network_attempts': 3,
      'security.budgets.account_failures': 0,
    },
    ...extra,
  });
  // The network bucket spans realms (and earlier runs on this database).
  await s.h.ctx.db.query("delete from abuse_counters where bucket like 'signin:net:%'");
  return { ...s, mailTo: (n: number) => mail.waitFor('alice@example.com', n, s.realm.display_name) };
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

  test('case=two processes on one database share the account budget under concurrency/mode=headless', {
    skip: RACE_NEEDS_POSTGRES,
  }, async (t: TestContext) => {
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

  test('case=emailed codes and magic links spend the network budget; a spent one refuses checks and sends/mode=headless', async (t: TestContext) => {
    const s = await mailingRealm(t, { loginUi: 'https://login.example.com/signin' });
    await s.h.setPolicy(s.realm, { login: { password: true, email_otp: true, magic_link: true } });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    // Three attempts: two sends and a wrong code.
    assert.equal((await tx.step('otp/send', { purpose: 'login' })).status, 200);
    assert.equal((await tx.step('otp/send', { purpose: 'magic_link' })).status, 200);
    assert.deepEqual(await deliverQueued(s.h), { sent: 2 });
    const mails = await Promise.all([s.mailTo(1), s.mailTo(2)]);
    const code = codeIn(mails.find((m) => /sign-in code/.test(m.subject)) ?? mails[0]);
    const link = linkIn(mails.find((m) => /^Sign in to/.test(m.subject)) ?? mails[0]);
    const token = new URL(link).searchParams.get('magic_link') ?? '';
    assert.equal((await tx.step('otp/verify', { code: wrongCode(code) })).status, 200);
    const queued = await count(s.h, 'select 1 from notifications where realm_id = $1', [s.realm.id]);
    // The budget is spent: the right code and the right link are not even checked, nothing is sent.
    const refused: [string, JsonResponse][] = [
      ['otp/verify', await tx.step('otp/verify', { code })],
      ['magic-link', await tx.step('magic-link', { token })],
      ['otp/send', await tx.step('otp/send', { purpose: 'login' })],
      ['password/reset', await tx.step('password/reset', {})],
    ];
    for (const [path, r] of refused) {
      assert.equal(r.status, 429, `${path}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.code, 'rate_limited');
      assert.ok(Number(r.headers.get('retry-after')) > 0, `${path} carries Retry-After`);
    }
    assert.equal(await count(s.h, 'select 1 from notifications where realm_id = $1', [s.realm.id]), queued);
    assert.equal((await tx.get()).body.status, 'pending');
    // Slowed, not spent: after the window the same code still signs in.
    s.h.clock.advance(60_000);
    assert.equal((await tx.step('otp/verify', { code })).body.status, 'completed');
  });

  test('case=a spent password budget names the mailbox ways, and an emailed code still signs in/mode=headless', async (t: TestContext) => {
    const mail = await startMailSink(t);
    const s = await signinSetup(t, {
      clock: movableClock(),
      overrides: { ...mail.overrides, 'security.budgets.account_failures': 2 },
      loginUi: 'https://login.example.com/signin',
    });
    await s.h.setPolicy(s.realm, { login: { password: true, email_otp: true, magic_link: true } });
    const tx = await wrongPasswordTx(s.h, s.realm.name);
    for (const guess of ['wrong-1', 'wrong-2'])
      assert.equal((await tx.step('password', { password: guess })).status, 200);
    const refused = await tx.step('password', { password: PASSWORD });
    assert.equal(refused.status, 429, JSON.stringify(refused.body));
    assert.deepEqual(refused.body.alternatives, ['email_otp', 'magic_link']);
    // The mailbox budget is the account's own: the code is sent, checked and signs in.
    assert.equal((await tx.step('otp/send', { purpose: 'login' })).status, 200);
    await deliverQueued(s.h);
    const code = codeIn(await mail.waitFor('alice@example.com', 1, s.realm.display_name));
    const done = await tx.step('otp/verify', { code });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    // The password budget stays spent meanwhile; without mail ways the 429 names none.
    await s.h.setPolicy(s.realm, { login: { password: true, email_otp: false, magic_link: false } });
    const again = await wrongPasswordTx(s.h, s.realm.name);
    const plain = await again.step('password', { password: PASSWORD });
    assert.equal(plain.status, 429);
    assert.equal(plain.body.alternatives, undefined);
  });

  test('case=challenge sends and answers spend the network budget/mode=headless', async (t: TestContext) => {
    const s = await mailingRealm(t);
    await s.h.setPolicy(s.realm, {
      authentication_flow: { rules: [{ outcome: 'challenge' }], email_code_alternative: true },
    });
    // The password and the send are two attempts, the wrong code the third.
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const state = await tx.step('password', { identifier: 'alice@example.com', password: PASSWORD });
    assert.equal(state.body.next_actions[0]?.type, 'challenge', JSON.stringify(state.body));
    assert.equal((await tx.step('challenge/send', {})).status, 200);
    await deliverQueued(s.h);
    const code = codeIn(await s.mailTo(1));
    assert.equal((await tx.step('challenge', { code: wrongCode(code) })).status, 200);
    for (const [path, body] of [
      ['challenge', { code }],
      ['challenge/send', {}],
    ] as const) {
      const r = await tx.step(path, body);
      assert.equal(r.status, 429, `${path}: ${JSON.stringify(r.body)}`);
      assert.equal(r.body.code, 'rate_limited');
    }
    s.h.clock.advance(60_000);
    assert.equal((await tx.step('challenge', { code })).body.status, 'completed');
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
