import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeBase32, encodeBase32 } from './base32.ts';
import { hotpUri, newTotpSecret, totpUri } from './otpauth-uri.ts';

// Reads a URI back the way an authenticator app does: label split on the first raw ':'.
function parse(uri: string) {
  const url = new URL(uri);
  const rawLabel = url.pathname.slice(1);
  const sep = rawLabel.indexOf(':');
  return {
    protocol: url.protocol,
    type: url.host,
    issuer: decodeURIComponent(rawLabel.slice(0, sep)),
    account: decodeURIComponent(rawLabel.slice(sep + 1)),
    params: url.searchParams,
  };
}

describe('otpauth URIs', () => {
  test('case=the Key Uri Format for a simple label', () => {
    assert.equal(
      totpUri({ issuer: 'ProudAuth', account: 'alice', secret: 'JBSWY3DPEHPK3PXP' }),
      'otpauth://totp/ProudAuth:alice?secret=JBSWY3DPEHPK3PXP&issuer=ProudAuth&algorithm=SHA1&digits=6&period=30',
    );
  });

  const labels: [string, string][] = [
    ['Proud Auth', 'alice@example.test'],
    ['ACME: Corp', 'a:b c@example.test'],
    ['Ünïcode & Co?', 'bob+tag@example.test#1'],
    ['100%', 'x/y'],
  ];
  for (const [issuer, account] of labels) {
    test(`case=issuer ${JSON.stringify(issuer)} and account ${JSON.stringify(account)} survive new URL()`, () => {
      const secret = newTotpSecret();
      const uri = totpUri({ issuer, account, secret: encodeBase32(secret) });
      assert.doesNotMatch(uri, /[ +]/, 'spaces are %20, never a literal space or +');
      assert.equal(uri.split(':').length, 3, 'only the scheme and the label separator are raw colons');
      const p = parse(uri);
      assert.equal(p.protocol, 'otpauth:');
      assert.equal(p.type, 'totp');
      assert.equal(p.issuer, issuer);
      assert.equal(p.account, account);
      assert.equal(p.params.get('issuer'), issuer);
      assert.equal(p.params.get('algorithm'), 'SHA1');
      assert.equal(p.params.get('digits'), '6');
      assert.equal(p.params.get('period'), '30');
      assert.deepEqual(decodeBase32(p.params.get('secret')!), secret);
    });
  }

  test('case=the secret is written in canonical base32', () => {
    const uri = totpUri({ issuer: 'I', account: 'a', secret: 'jbsw y3dp ehpk 3pxp', digits: 8, period: 60 });
    const p = parse(uri);
    assert.equal(p.params.get('secret'), 'JBSWY3DPEHPK3PXP');
    assert.equal(p.params.get('digits'), '8');
    assert.equal(p.params.get('period'), '60');
  });

  test('case=bad input is refused', () => {
    const ok = { issuer: 'I', account: 'a', secret: 'JBSWY3DPEHPK3PXP' };
    assert.throws(() => totpUri({ ...ok, issuer: '' }), RangeError);
    assert.throws(() => totpUri({ ...ok, account: '' }), RangeError);
    assert.throws(() => totpUri({ ...ok, secret: '' }), RangeError);
    assert.throws(() => totpUri({ ...ok, secret: 'not base32!' }));
    assert.throws(() => totpUri({ ...ok, digits: 4 }), RangeError);
    assert.throws(() => totpUri({ ...ok, period: 0 }), RangeError);
  });

  test('case=hotp URIs carry the counter', () => {
    const p = parse(
      hotpUri({ issuer: 'Proud Auth', account: 'alice', secret: 'JBSWY3DPEHPK3PXP', counter: 0 }),
    );
    assert.equal(p.type, 'hotp');
    assert.equal(p.params.get('counter'), '0');
    assert.equal(p.params.get('period'), null);
  });

  test('case=new secrets are 160 random bits', () => {
    const a = newTotpSecret();
    assert.equal(a.length, 20);
    assert.notDeepEqual(a, newTotpSecret());
    assert.equal(encodeBase32(a).length, 32);
  });
});
