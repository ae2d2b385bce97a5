import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { formatDuration, parseDuration } from './duration.ts';

describe('parseDuration', () => {
  const valid: [string, number][] = [
    ['0', 0],
    ['250ms', 250],
    ['60s', 60_000],
    ['10m', 600_000],
    ['72h', 259_200_000],
    ['1h30m', 5_400_000],
    ['7d', 604_800_000],
    ['90d', 7_776_000_000],
    ['1.5h', 5_400_000],
    ['1.1s', 1100],
    ['1m30s500ms', 90_500],
    [' 5s ', 5000],
  ];
  for (const [text, ms] of valid) {
    test(`case=${JSON.stringify(text)} is ${ms} ms`, () => assert.equal(parseDuration(text), ms));
  }

  const invalid = ['', '10', '5 m', '1x', 'h', '-5s', '1h1h', '1.5ms', 'ms', '10mm', '1e3s', '0s5'];
  for (const text of invalid) {
    test(`case=${JSON.stringify(text)} is refused`, () => {
      assert.throws(() => parseDuration(text), /invalid duration/);
    });
  }
});

describe('formatDuration', () => {
  const cases: [number, string][] = [
    [0, '0s'],
    [250, '250ms'],
    [60_000, '1m'],
    [5_400_000, '1h30m'],
    [604_800_000, '7d'],
    [90_061_001, '1d1h1m1s1ms'],
  ];
  for (const [ms, text] of cases) {
    test(`case=${ms} renders ${text} and parses back`, () => {
      assert.equal(formatDuration(ms), text);
      assert.equal(parseDuration(text), ms);
    });
  }

  test('case=refuses negative and fractional values', () => {
    assert.throws(() => formatDuration(-1));
    assert.throws(() => formatDuration(1.5));
  });
});
