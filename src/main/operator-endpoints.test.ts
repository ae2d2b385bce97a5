// Who may reach the operator operations of a running proudauth dev (operator-endpoints.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isLoopbackPeer } from './operator-endpoints.ts';

test('only this machine is a loopback peer, in every spelling', () => {
  for (const a of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1'])
    assert.equal(isLoopbackPeer(a), true, a);
  for (const a of [
    '10.0.0.1',
    '192.168.1.2',
    '::ffff:10.0.0.1',
    'fe80::1',
    '::',
    '0.0.0.0',
    '',
    'localhost',
    undefined,
  ])
    assert.equal(isLoopbackPeer(a), false, String(a));
});
