import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ClientAddresses, forwardedFor, networkOf } from './client-address.ts';

const req = (peer: string | undefined, headers: Record<string, string> = {}) => ({
  headers,
  socket: { remoteAddress: peer },
});

describe('client address', () => {
  const none = new ClientAddresses([]);
  const proxies = new ClientAddresses(['10.0.0.0/8', '::1/128', '2001:db8:ffff::/48']);

  test('without trusted proxies the socket peer counts and forwarding headers are ignored', () => {
    const headers = { 'x-forwarded-for': '198.51.100.7', forwarded: 'for=198.51.100.8' };
    assert.equal(none.of(req('10.1.2.3', headers)), '10.1.2.3');
    assert.equal(none.of(req('::ffff:127.0.0.1', headers)), '127.0.0.1', 'IPv4-mapped peer as IPv4');
    assert.equal(none.of(req(undefined)), null);
  });

  test('an untrusted peer cannot name the client', () => {
    assert.equal(proxies.of(req('203.0.113.5', { 'x-forwarded-for': '198.51.100.7' })), '203.0.113.5');
  });

  test('a trusted peer names the client; an IPv4-mapped peer matches IPv4 ranges', () => {
    for (const peer of ['10.9.8.7', '::ffff:10.9.8.7', '::1']) {
      assert.equal(proxies.of(req(peer, { 'x-forwarded-for': '198.51.100.7' })), '198.51.100.7', peer);
    }
  });

  test('X-Forwarded-For is walked from the right, skipping trusted hops only', () => {
    const table: [string, string][] = [
      ['198.51.100.7', '198.51.100.7'],
      ['6.6.6.6, 198.51.100.7', '198.51.100.7'], // a client's own value stays to the left
      ['198.51.100.7, 10.0.0.2', '198.51.100.7'],
      ['6.6.6.6, 198.51.100.7, 10.0.0.2, 10.0.0.3', '198.51.100.7'],
      ['10.0.0.4, 10.0.0.2', '10.0.0.4'], // every hop trusted: the farthest one
      ['198.51.100.7:4711', '198.51.100.7'],
      ['[2001:db8::7]:4711', '2001:db8::7'],
      ['2001:DB8:0:0::7', '2001:db8::7'],
      ['::ffff:198.51.100.7', '198.51.100.7'],
      ['garbage', '10.9.8.7'], // malformed: the trusted peer is all we know
      ['198.51.100.7, garbage', '10.9.8.7'],
      ['garbage, 198.51.100.7', '198.51.100.7'],
      ['10.0.0.2, unknown', '10.9.8.7'],
      ['6.6.6.6, 10.1', '10.9.8.7'], // classful shorthand is no address
      ['', '10.9.8.7'],
      [' , ', '10.9.8.7'],
    ];
    for (const [xff, client] of table) {
      assert.equal(proxies.of(req('10.9.8.7', { 'x-forwarded-for': xff })), client, xff);
    }
  });

  test('Forwarded elements: quoted, IPv6, ports, unknown and obfuscated nodes', () => {
    const table: [string, string][] = [
      ['for=198.51.100.7', '198.51.100.7'],
      ['for="198.51.100.7:4711";proto=https', '198.51.100.7'],
      ['For="[2001:db8:cafe::17]:4711"', '2001:db8:cafe::17'],
      ['for="[2001:db8:cafe::17]:_port"', '2001:db8:cafe::17'],
      ['for=6.6.6.6, for=198.51.100.7;by=10.0.0.1', '198.51.100.7'],
      ['for=198.51.100.7, for=10.0.0.2', '198.51.100.7'],
      ['for=unknown', '10.9.8.7'],
      ['for=_hidden, for=10.0.0.2', '10.0.0.2'], // the last address known
      ['proto=https', '10.9.8.7'], // an element without for
      ['for="198.51.100.7', '10.9.8.7'], // unterminated quote: unreadable
      ['for=198.51.100.7;for=6.6.6.6', '10.9.8.7'], // for twice in one element
      ['for="\\"x"', '10.9.8.7'],
      ['for=[2001:db8::7]', '2001:db8::7'], // unquoted brackets, tolerated
      ['=x', '10.9.8.7'],
    ];
    for (const [header, client] of table) {
      assert.equal(proxies.of(req('10.9.8.7', { forwarded: header })), client, header);
    }
  });

  test('auto takes either header; when both come and disagree the proxy counts', () => {
    const both = (f: string, x: string) => req('10.9.8.7', { forwarded: f, 'x-forwarded-for': x });
    assert.equal(proxies.of(both('for=198.51.100.7', '198.51.100.7')), '198.51.100.7');
    assert.equal(proxies.of(both('for=6.6.6.6', '198.51.100.7')), '10.9.8.7');
    const forwarded = new ClientAddresses(['10.0.0.0/8'], 'forwarded');
    const xff = new ClientAddresses(['10.0.0.0/8'], 'x-forwarded');
    assert.equal(forwarded.of(both('for=198.51.100.7', '6.6.6.6')), '198.51.100.7');
    assert.equal(xff.of(both('for=6.6.6.6', '198.51.100.7')), '198.51.100.7');
    assert.equal(forwarded.of(req('10.9.8.7', { 'x-forwarded-for': '6.6.6.6' })), '10.9.8.7');
  });

  test('an IPv4-mapped trusted range is its IPv4 range', () => {
    const mapped = new ClientAddresses(['::ffff:10.0.0.0/104']);
    assert.equal(mapped.of(req('10.1.1.1', { 'x-forwarded-for': '198.51.100.7' })), '198.51.100.7');
  });

  test('at most 32 hops are walked', () => {
    const hops = Array.from({ length: 40 }, (_, i) => `10.0.0.${i + 1}`).join(', ');
    assert.equal(proxies.of(req('10.9.8.7', { 'x-forwarded-for': `198.51.100.7, ${hops}` })), '10.0.0.9');
  });

  test('forwardedFor reads every element', () => {
    assert.deepEqual(
      forwardedFor('for=192.0.2.60;proto=http;by=203.0.113.43, for=unknown')?.map(
        (a) => a?.toString() ?? null,
      ),
      ['192.0.2.60', null],
    );
  });
});

describe('networkOf', () => {
  test('/24 for IPv4 (mapped too), /64 for IPv6, null for anything else', () => {
    const table: [string | null, string | null][] = [
      ['198.51.100.7', '198.51.100.0/24'],
      ['::ffff:198.51.100.7', '198.51.100.0/24'],
      ['2001:db8:0a:00b:1::2', '2001:db8:a:b::/64'],
      ['2001:db8::1', '2001:db8:0:0::/64'],
      ['fe80::1%eth0', 'fe80:0:0:0::/64'],
      ['not an address', null],
      [null, null],
    ];
    for (const [address, network] of table) assert.equal(networkOf(address), network, String(address));
  });
});
