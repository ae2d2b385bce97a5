import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { UpstreamCircuits } from './upstream-circuit.ts';

describe('federation › upstream circuit', () => {
  test('case=opens after the run of failures, refuses during the cool-down, lets one trial through', () => {
    const c = new UpstreamCircuits({ failures: 3, coolDownMs: 1000 });
    for (let i = 0; i < 2; i++) {
      assert.equal(c.admit('a', 0), true);
      c.failed('a', 0);
    }
    assert.equal(c.admit('a', 0), true, 'two failures: still closed');
    c.failed('a', 10);
    assert.equal(c.admit('a', 500), false, 'open');
    assert.equal(c.admit('b', 500), true, 'another connection is not affected');
    assert.equal(c.admit('a', 1010), true, 'the cool-down passed: one trial');
    assert.equal(c.admit('a', 1011), false, 'only one trial at a time');
    c.failed('a', 1020);
    assert.equal(c.admit('a', 1500), false, 'the trial failed: open again');
    assert.equal(c.admit('a', 2020), true);
    c.succeeded('a');
    assert.equal(c.admit('a', 2021), true, 'closed after a success');
  });

  test('case=a success resets the count of failures', () => {
    const c = new UpstreamCircuits({ failures: 2, coolDownMs: 1000 });
    c.failed('a', 0);
    c.succeeded('a');
    c.failed('a', 1);
    assert.equal(c.admit('a', 2), true);
  });
});
