import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { startHeadless } from '../../harness/signin-driver.ts';
import { REDIRECT, signinSetup } from '../../harness/signin-kit.ts';

describe('sign-in › headless', () => {
  test('case=completes with password only/mode=headless', async (t) => {
    const { h, realm } = await signinSetup(t, { user: { password: 'correct-horse-9' } });
    const tx = await startHeadless(h, realm.name, 'web-app', REDIRECT);
    assert.equal(tx.start.body.state.status, 'pending');
    assert.match(tx.token, /^pa_tx_/);
    assert.deepEqual(
      tx.start.body.state.next_actions.map((a: { type: string }) => a.type),
      ['identify', 'password'],
    );
    const identified = await tx.step('identify', { identifier: 'alice@example.com' });
    assert.equal(identified.status, 200);
    assert.deepEqual(
      identified.body.next_actions.map((a: { type: string }) => a.type),
      ['password'],
    );
    const done = await tx.step('password', { password: 'correct-horse-9' });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.status, 'completed');
    const redirect = new URL(done.body.redirect_to);
    assert.equal(`${redirect.origin}${redirect.pathname}`, REDIRECT);
    assert.ok(redirect.searchParams.get('code'));
    assert.equal(redirect.searchParams.get('state'), 'st-123');
    assert.equal(
      redirect.searchParams.get('iss'),
      `${h.ctx.config.server.publicOrigin}/realms/${realm.name}`,
    );
    assert.deepEqual(done.body.completed_factors, ['pwd']);
    assert.equal(done.body.user.email_hint, 'a***@example.com');
    const metrics = await (await h.internal('/metrics')).text();
    assert.match(metrics, /^service_authentications_total\{outcome="success"\} 1$/m);
  });
});
