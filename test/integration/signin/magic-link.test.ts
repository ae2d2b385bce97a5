import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { deliverQueued, linkIn, sendAndReceive, startMailSink } from '../../harness/mail-kit.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import { actionTypes, provedThenRewound, REDIRECT, signinSetup, txRow } from '../../harness/signin-kit.ts';

const UI = 'https://login.example.com/signin';

async function setup(t: Parameters<typeof signinSetup>[0], loginUi: string | undefined = UI) {
  const mail = await startMailSink(t);
  const s = await signinSetup(t, { overrides: mail.overrides, loginUi });
  await s.h.setPolicy(s.realm, { login: { password: true, magic_link: true } });
  return { ...s, mail };
}

describe('sign-in › magic link', () => {
  test('case=the mailed link points to the login UI and its token signs in with factor magic_link', async (t) => {
    const s = await setup(t);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { ui_locales: 'de' });
    const identified = await tx.step('identify', { identifier: 'alice@example.com' });
    assert.deepEqual(actionTypes(identified.body), ['password', 'magic_link']);
    // The password and the link are alternatives (docs/signin.md, "Alternatives").
    assert.deepEqual(identified.body.next_actions[1].options, {
      group: 'primary',
      purpose: 'magic_link',
      link_sent: false,
    });
    assert.equal(identified.body.next_actions[1].required, false);
    assert.equal((await tx.step('otp/send', { purpose: 'magic_link' })).status, 200);
    await deliverQueued(s.h);
    const mail = await s.mail.waitFor('alice@example.com', 1, s.realm.display_name);
    const link = new URL(linkIn(mail));
    assert.equal(`${link.origin}${link.pathname}`, UI);
    assert.equal(link.searchParams.get('transaction_id'), tx.id);
    assert.equal(link.searchParams.get('realm'), s.realm.name);
    // The page speaks the sign-in's language even in a browser that cannot read the transaction.
    assert.equal(link.searchParams.get('ui_locales'), 'de');
    assert.match(mail.html, /<a href="https:\/\/login\.example\.com\/signin\?/);
    const token = link.searchParams.get('magic_link') ?? '';
    const wrong = await tx.step('magic-link', { token: `${token}x` });
    assert.equal(wrong.body.status, 'pending');
    const done = await tx.step('magic-link', { token });
    assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
    assert.deepEqual(done.body.completed_factors, ['magic_link']);
  });

  test('case=a link is single use: once it signed in, it never signs in again', async (t) => {
    const s = await setup(t);
    // MFA keeps the transaction pending after the link, so the question is the link's, not the transaction's.
    await s.h.setPolicy(s.realm, { mfa: { requirement: 'required', allowed_factors: ['totp'] } });
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'alice@example.com' });
    const to = { to: 'alice@example.com', realm: s.realm.display_name };
    const link = new URL(linkIn(await sendAndReceive(s.h, s.mail, tx, 'magic_link', to)));
    const token = link.searchParams.get('magic_link') ?? '';
    const proof = { path: 'magic-link', body: { token }, factor: 'magic_link' };
    const state = await provedThenRewound(s.h, s.realm, tx, proof);
    assert.deepEqual(actionTypes(state.body), ['password', 'magic_link'], 'the link step is offered again');
    assert.equal(state.body.next_actions[1].options.link_sent, false, 'no live link is out');
    const again = await tx.step('magic-link', { token });
    assert.equal(again.body.status, 'pending', JSON.stringify(again.body));
    assert.deepEqual(again.body.completed_factors, [], 'the used link proved nothing');
    assert.equal((await txRow(s.h, s.realm, tx.id)).failures, 1, 'a used link is a failed proof');
  });

  test('case=magic links are not offered for a username or without a usable login UI', async (t) => {
    const s = await setup(t);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    const byName = await tx.step('identify', { identifier: 'alice' });
    assert.deepEqual(actionTypes(byName.body), ['password']);
    assert.equal((await tx.step('otp/send', { purpose: 'magic_link' })).status, 409);
    assert.equal((await tx.step('magic-link', { token: 'abc' })).status, 409);

    const bare = await setup(t, '');
    const tx2 = await startHeadless(bare.h, bare.realm.name, 'web-app', REDIRECT);
    const identified = await tx2.step('identify', { identifier: 'alice@example.com' });
    assert.deepEqual(actionTypes(identified.body), ['password'], 'no login UI configured');
  });

  test('case=an unknown address: same answer, no mail, and no token works', async (t) => {
    const s = await setup(t);
    const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT);
    await tx.step('identify', { identifier: 'nobody@example.com' });
    const sent = await tx.step('otp/send', { purpose: 'magic_link' });
    assert.equal(sent.status, 200);
    assert.equal(sent.body.next_actions[1].options.link_sent, true);
    assert.deepEqual(await deliverQueued(s.h), {});
    const tried = await tx.step('magic-link', { token: 'A'.repeat(43) });
    assert.equal(tried.body.status, 'pending');
  });
});
