// Signatures checked by an independent verifier, the standardwebhooks package (spec doc 2,
// Authentication 4): padded and unpadded secrets, and two signatures during a rotation.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { keyOfSecret, newWebhookSecret, signatureHeader, signOne } from './webhook-signature.ts';

const body = '{"event_id":"obx_01hzy5g2k9m3n4p5q6r7s8t9v0","data":{}}';
const id = 'obx_01hzy5g2k9m3n4p5q6r7s8t9v0';
const headers = (sig: string, ts: number) => ({
  'webhook-id': id,
  'webhook-timestamp': String(ts),
  'webhook-signature': sig,
});
const nowSeconds = () => Math.floor(Date.now() / 1000);

describe('webhook signatures', () => {
  test('a new secret is whsec_ and 32 bytes of padded standard base64', () => {
    const s = newWebhookSecret();
    assert.match(s, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(keyOfSecret(s).length, 32);
    assert.notEqual(newWebhookSecret(), s);
  });

  test('the standardwebhooks verifier accepts our signature', () => {
    const secret = newWebhookSecret();
    const ts = nowSeconds();
    const sig = signatureHeader([secret], id, ts, body);
    assert.match(sig, /^v1,[A-Za-z0-9+/]+=*$/);
    assert.deepEqual(new Webhook(secret).verify(body, headers(sig, ts)), JSON.parse(body));
  });

  test('a secret issued unpadded signs and verifies the same', () => {
    let secret = newWebhookSecret();
    while (!secret.endsWith('=')) secret = newWebhookSecret();
    const unpadded = secret.replace(/=+$/, '');
    const ts = nowSeconds();
    assert.equal(signOne(unpadded, id, ts, body), signOne(secret, id, ts, body));
    const sig = signatureHeader([unpadded], id, ts, body);
    new Webhook(unpadded).verify(body, headers(sig, ts));
    new Webhook(secret).verify(body, headers(sig, ts));
  });

  test('during a rotation both secrets verify the one header', () => {
    const current = newWebhookSecret();
    const previous = newWebhookSecret();
    const ts = nowSeconds();
    const sig = signatureHeader([current, previous], id, ts, body);
    assert.equal(sig.split(' ').length, 2);
    new Webhook(current).verify(body, headers(sig, ts));
    new Webhook(previous).verify(body, headers(sig, ts));
    assert.throws(() => new Webhook(newWebhookSecret()).verify(body, headers(sig, ts)));
  });

  test('a changed body, id or timestamp fails verification', () => {
    const secret = newWebhookSecret();
    const ts = nowSeconds();
    const sig = signatureHeader([secret], id, ts, body);
    const wh = new Webhook(secret);
    assert.throws(() => wh.verify(`${body} `, headers(sig, ts)));
    assert.throws(() => wh.verify(body, { ...headers(sig, ts), 'webhook-id': 'obx_other' }));
    assert.throws(() => wh.verify(body, headers(sig, ts + 1)));
    assert.throws(() => wh.verify(body, headers(signatureHeader([secret], id, ts - 3600, body), ts - 3600)));
  });
});
