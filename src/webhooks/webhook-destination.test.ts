// Destination rules checked on the raw URL and on every resolved address (spec doc 2, Delivery
// semantics 3; docs/webhooks.md).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Resolver } from '../platform/net/outbound-http.ts';
import {
  type DeliveryPolicy,
  destinationProblem,
  operatorAllowsPrivate,
  residencyProblem,
  urlShapeProblem,
} from './webhook-destination.ts';

const dev: DeliveryPolicy = {
  environment: 'development',
  egressAllowlist: [],
  allowPrivateWebhooks: false,
  allowedDestinations: [],
};
const prod: DeliveryPolicy = { ...dev, environment: 'production' };
const table: Record<string, string[]> = {
  'hooks.example.com': ['93.184.216.34'],
  'rebind.example.com': ['93.184.216.34', '10.0.0.5'],
  'nat64.example.com': ['64:ff9b::a9fe:a9fe'],
  'local.example.com': ['127.0.0.1'],
};
const resolver: Resolver = async (h) => {
  const a = table[h];
  if (!a) throw new Error('ENOTFOUND');
  return a.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
};

describe('webhook destination', () => {
  test('shape: canonical absolute http(s) URLs only', () => {
    assert.equal(urlShapeProblem('https://hooks.example.com/in', 'development'), null);
    assert.equal(urlShapeProblem('https://hooks.example.com', 'development'), null);
    assert.equal(urlShapeProblem('http://hooks.example.com/in', 'development'), null);
    for (const bad of [
      'hooks.example.com/in',
      'ftp://hooks.example.com/',
      'https://user:pw@hooks.example.com/',
      'https://hooks.example.com/#frag',
      'https://hooks.example.com/a/../b',
      'https://HOOKS.example.com/',
      'http://127.1/',
      'http://0x7f.0.0.1/',
      'https://hooks.example.com\\@evil.example/',
      'https://hooks.example.com/\tin',
      ' https://hooks.example.com/',
    ]) {
      assert.equal(urlShapeProblem(bad, 'development')?.code, 'invalid_url', bad);
    }
  });

  test('https is required in production', () => {
    assert.equal(urlShapeProblem('http://hooks.example.com/in', 'production')?.code, 'https_required');
    assert.equal(urlShapeProblem('https://hooks.example.com/in', 'production'), null);
  });

  test('every resolved address must pass the guard', async () => {
    assert.equal(await destinationProblem('https://hooks.example.com/in', dev, false, resolver), null);
    for (const url of [
      'https://rebind.example.com/',
      'https://nat64.example.com/',
      'https://local.example.com/',
      'https://127.0.0.1/',
      'https://[::1]/',
      'https://[::ffff:a9fe:a9fe]/',
      'https://169.254.169.254/',
    ]) {
      assert.equal((await destinationProblem(url, dev, false, resolver))?.code, 'egress_denied', url);
    }
    assert.equal(
      (await destinationProblem('https://nowhere.example.com/', dev, false, resolver))?.code,
      'unresolvable',
    );
  });

  test('private destinations need the subscription flag and the operator allowlist', async () => {
    const allow: DeliveryPolicy = { ...dev, egressAllowlist: ['127.0.0.1/32'] };
    assert.equal(operatorAllowsPrivate(dev), false);
    assert.equal(operatorAllowsPrivate(allow), true);
    assert.equal(operatorAllowsPrivate({ ...prod, allowPrivateWebhooks: true }), false);
    assert.equal(await destinationProblem('http://local.example.com/', allow, true, resolver), null);
    assert.equal(
      (await destinationProblem('http://local.example.com/', allow, false, resolver))?.code,
      'egress_denied',
    );
    assert.equal(
      (await destinationProblem('http://rebind.example.com/', allow, true, resolver))?.code,
      'egress_denied',
    );
  });

  test('residency: only hosts on the operator list, before anything is resolved', async () => {
    const eu: DeliveryPolicy = { ...dev, allowedDestinations: ['*.example.com'] };
    assert.equal(await destinationProblem('https://hooks.example.com/in', eu, false, resolver), null);
    const outside = await destinationProblem('https://hooks.example.org/in', eu, false, resolver);
    assert.equal(outside?.code, 'egress_denied');
    assert.match(outside?.detail ?? '', /residency/);
    assert.equal(residencyProblem('https://hooks.example.org/in', dev), null, 'no list, no rule');
  });
});
