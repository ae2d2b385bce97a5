// The egress guard against every special range and every IPv6 form that embeds an IPv4 address
// (spec doc 2, Delivery semantics 3; docs/webhooks.md, the egress guard).

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { classifyAddress, EgressGuard, STRICT_EGRESS } from './egress-guard.ts';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 500);
const strict = new EgressGuard(STRICT_EGRESS);

// First and last address of each special block (IANA special-purpose registries), with the class.
const DENIED: [string, string][] = [
  ['0.0.0.0', 'unspecified'],
  ['0.255.255.255', 'unspecified'],
  ['10.0.0.0', 'private'],
  ['10.255.255.255', 'private'],
  ['100.64.0.0', 'carrier_grade_nat'],
  ['100.127.255.255', 'carrier_grade_nat'],
  ['127.0.0.1', 'loopback'],
  ['127.255.255.255', 'loopback'],
  ['169.254.0.0', 'link_local'],
  ['169.254.169.254', 'link_local'],
  ['172.16.0.0', 'private'],
  ['172.31.255.255', 'private'],
  ['192.0.0.0', 'reserved'],
  ['192.0.0.255', 'reserved'],
  ['192.0.2.0', 'reserved'],
  ['192.0.2.255', 'reserved'],
  ['192.88.99.1', 'reserved'],
  ['192.168.0.0', 'private'],
  ['192.168.255.255', 'private'],
  ['198.18.0.0', 'reserved'],
  ['198.19.255.255', 'reserved'],
  ['198.51.100.7', 'reserved'],
  ['203.0.113.255', 'reserved'],
  ['224.0.0.1', 'multicast'],
  ['239.255.255.255', 'multicast'],
  ['240.0.0.1', 'reserved'],
  ['255.255.255.255', 'broadcast'],
  ['::', 'unspecified'],
  ['::1', 'loopback'],
  ['fe80::1', 'link_local'],
  ['fe80::1%eth0', 'link_local'],
  ['febf:ffff::1', 'link_local'],
  ['fc00::1', 'unique_local'],
  ['fdff:ffff::1', 'unique_local'],
  ['ff02::1', 'multicast'],
  ['ff0e::1', 'multicast'],
  ['2001:db8::1', 'reserved'],
  ['2001:2::1', 'reserved'],
  ['100::1', 'reserved'],
  ['fec0::1', 'reserved'],
  ['3fff::1', 'reserved'],
  ['4000::1', 'reserved'],
  ['::2', 'ipv4_embedding'],
  // IPv4 inside IPv6.
  ['::ffff:127.0.0.1', 'loopback'],
  ['::ffff:7f00:1', 'loopback'],
  ['0:0:0:0:0:FFFF:7F00:0001', 'loopback'],
  ['::ffff:169.254.169.254', 'link_local'],
  ['::ffff:10.0.0.1', 'private'],
  ['::127.0.0.1', 'ipv4_embedding'],
  ['::7f00:1', 'ipv4_embedding'],
  ['::8.8.8.8', 'ipv4_embedding'],
  ['64:ff9b::7f00:1', 'ipv4_embedding'],
  ['64:ff9b::127.0.0.1', 'ipv4_embedding'],
  ['64:ff9b::808:808', 'ipv4_embedding'],
  ['64:ff9b:1::a00:1', 'ipv4_embedding'],
  ['2002:7f00:1::', 'ipv4_embedding'],
  ['2002:808:808::1', 'ipv4_embedding'],
  ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'ipv4_embedding'],
  ['::ffff:0:7f00:1', 'ipv4_embedding'],
  // Legacy IPv4 spellings that resolvers still honour.
  ['127.1', 'loopback'],
  ['0x7f.0.0.1', 'loopback'],
  ['0177.0.0.1', 'loopback'],
  ['2130706433', 'loopback'],
  // Not addresses at all.
  ['', 'invalid'],
  ['localhost', 'invalid'],
  ['example.com', 'invalid'],
  ['::ffff:300.1.1.1', 'invalid'],
];

const ALLOWED = [
  '8.8.8.8',
  '1.1.1.1',
  '100.63.255.255',
  '100.128.0.0',
  '172.15.255.255',
  '172.32.0.0',
  '192.167.255.255',
  '192.169.0.0',
  '198.17.255.255',
  '198.20.0.0',
  '223.255.255.255',
  '::ffff:8.8.8.8',
  '::ffff:808:808',
  '2606:4700:4700::1111',
  '2a00:1450:4001::200e',
  '[2606:4700::1]',
];

describe('egress guard: special ranges', () => {
  for (const [address, cls] of DENIED) {
    test(`refuses ${address || '(empty)'} as ${cls}`, () => {
      assert.equal(classifyAddress(address), cls);
      const v = strict.check(address);
      assert.equal(v.allowed, false);
      if (!v.allowed) assert.equal(v.reason, cls);
    });
  }
  for (const address of ALLOWED) {
    test(`allows ${address}`, () => {
      assert.equal(strict.check(address).allowed, true);
    });
  }
});

describe('egress guard: operator policy', () => {
  test('an allowlisted CIDR covers only its own addresses, in both spellings', () => {
    const g = new EgressGuard({ allowlist: ['127.0.0.0/30', '10.1.0.0/16'], allowPrivate: false });
    assert.equal(g.check('127.0.0.1').allowed, true);
    assert.equal(g.check('::ffff:127.0.0.2').allowed, true);
    assert.equal(g.check('127.0.0.4').allowed, false);
    assert.equal(g.check('10.1.255.255').allowed, true);
    assert.equal(g.check('10.2.0.0').allowed, false);
    assert.equal(g.check('::1').allowed, false);
    // An embedding of an allowlisted address is still refused: only the real address is listed.
    assert.equal(g.check('64:ff9b::7f00:1').allowed, false);
  });

  test('an IPv6 allowlist entry', () => {
    const g = new EgressGuard({ allowlist: ['::1/128', 'fd00:1::/32'], allowPrivate: false });
    assert.equal(g.check('::1').allowed, true);
    assert.equal(g.check('fd00:1::9').allowed, true);
    assert.equal(g.check('fd00:2::9').allowed, false);
  });

  test('no allowlist makes unspecified, broadcast or multicast reachable', () => {
    const g = new EgressGuard({ allowlist: ['0.0.0.0/0', '::/0'], allowPrivate: true });
    for (const a of ['0.0.0.0', '255.255.255.255', '224.0.0.1', '::', 'ff02::1']) {
      assert.equal(g.check(a).allowed, false, a);
    }
    assert.equal(g.check('10.0.0.1').allowed, true);
  });

  test('the development switch opens private ranges but not special ones', () => {
    const g = new EgressGuard({ allowlist: [], allowPrivate: true });
    for (const a of ['10.0.0.1', '127.0.0.1', '::1', 'fd00::1', '100.64.0.1', '169.254.1.1']) {
      assert.equal(g.check(a).allowed, true, a);
    }
    for (const a of ['192.0.2.1', '64:ff9b::7f00:1', '2002:7f00:1::', '224.0.0.1', '0.0.0.0']) {
      assert.equal(g.check(a).allowed, false, a);
    }
  });

  test('policies get distinct keys, equal policies the same key', () => {
    const a = new EgressGuard({ allowlist: ['10.0.0.0/8', '127.0.0.1/32'], allowPrivate: false });
    const b = new EgressGuard({ allowlist: ['127.0.0.1/32', '10.0.0.0/8'], allowPrivate: false });
    assert.equal(a.key, b.key);
    assert.notEqual(a.key, strict.key);
  });
});

// Properties: every generated address in a special range is refused, in every spelling.
const v4 = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
const dotted = (o: number[]) => o.join('.');
const hex = (o: number[]) => `${((o[0]! << 8) | o[1]!).toString(16)}:${((o[2]! << 8) | o[3]!).toString(16)}`;

describe('egress guard: properties', () => {
  test('the IPv4-mapped spellings of an address get its verdict', () => {
    fc.assert(
      fc.property(v4, (o) => {
        const plain = strict.check(dotted(o)).allowed;
        assert.equal(strict.check(`::ffff:${dotted(o)}`).allowed, plain);
        assert.equal(strict.check(`::ffff:${hex(o)}`).allowed, plain);
        assert.equal(strict.check(`0:0:0:0:0:ffff:${hex(o).toUpperCase()}`).allowed, plain);
      }),
      { numRuns },
    );
  });

  test('NAT64, 6to4, IPv4-compatible and Teredo embeddings are always refused', () => {
    fc.assert(
      fc.property(v4, fc.nat(0xffff), (o, x) => {
        for (const a of [
          `64:ff9b::${hex(o)}`,
          `64:ff9b::${dotted(o)}`,
          `64:ff9b:1::${hex(o)}`,
          `2002:${hex(o)}::${x.toString(16)}`,
          `::${dotted(o)}`,
          `::${hex(o)}`,
          `2001:0:${hex(o)}::${x.toString(16)}`,
        ]) {
          assert.equal(strict.check(a).allowed, false, a);
        }
      }),
      { numRuns },
    );
  });

  test('legacy IPv4 spellings get the verdict of the address they denote', () => {
    fc.assert(
      fc.property(fc.ipV4Extended(), (text) => {
        const n = new URL(`http://${text}/`).hostname; // the WHATWG parser's canonical form
        assert.equal(strict.check(text).allowed, strict.check(n).allowed, `${text} ~ ${n}`);
      }),
      { numRuns },
    );
  });

  test('only unicast outside every special block is allowed', () => {
    fc.assert(
      fc.property(fc.ipV6(), (a) => {
        const v = strict.check(a);
        if (v.allowed) assert.equal(classifyAddress(a), 'unicast');
      }),
      { numRuns },
    );
  });
});
