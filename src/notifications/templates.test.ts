import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { localeOf, render } from './templates.ts';

describe('notification templates', () => {
  test('case=the first ui_locales tag we have wins; English otherwise', () => {
    assert.equal(localeOf('fr-CA de-AT en'), 'de');
    assert.equal(localeOf('en-GB de'), 'en');
    assert.equal(localeOf('fr'), 'en');
    assert.equal(localeOf(null), 'en');
  });

  test('case=plain text and HTML carry the code; HTML escapes the realm name', () => {
    const r = render('login_code', 'en', { realm: 'A<b>&Co', code: '123456', minutes: 10 });
    assert.match(r.subject, /A<b>&Co/);
    assert.match(r.text, /Your sign-in code is 123456\./);
    assert.match(r.html, /123456/);
    assert.match(r.html, /A&lt;b&gt;&amp;Co/);
    assert.doesNotMatch(r.html, /<b>/);
  });

  test('case=German texts and a magic link as an anchor', () => {
    const r = render('magic_link', 'de', {
      realm: 'main',
      link: 'https://x.example/ui?a=1&b=2',
      minutes: 10,
    });
    assert.match(r.subject, /^Anmelden bei main$/);
    assert.match(r.text, /https:\/\/x\.example\/ui\?a=1&b=2/);
    assert.match(r.html, /<a href="https:\/\/x\.example\/ui\?a=1&amp;b=2">/);
  });

  test('case=the notice to the owner of a taken address, in English and German', () => {
    const en = render('account_exists', 'en', { realm: 'Acme' });
    assert.match(en.subject, /register with your address at Acme/);
    assert.match(en.text, /already has one/);
    const de = render('account_exists', 'de', { realm: 'Acme' });
    assert.match(de.subject, /Registrierungsversuch/);
    assert.match(de.text, /bereits ein Konto/);
  });

  test('case=the new sign-in and factor notices, in English and German', () => {
    const signIn = { realm: 'Acme', device: 'Firefox on Linux', time: '2026-01-02 03:04' };
    const en = render('new_sign_in', 'en', signIn);
    assert.match(en.subject, /New sign-in to your Acme account/);
    assert.match(en.text, /Device: Firefox on Linux/);
    assert.match(render('new_sign_in', 'de', signIn).text, /Gerät: Firefox on Linux/);
    const added = render('factor_changed', 'en', { realm: 'Acme', factor: 'webauthn', change: 'added' });
    assert.match(added.text, /A passkey was added to your account\./);
    const removed = render('factor_changed', 'de', { realm: 'Acme', factor: 'hotp', change: 'removed' });
    assert.match(removed.text, /Ein HOTP-Token wurde aus Ihrem Konto entfernt\./);
  });
});
