import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { loadConfig } from '../platform/config/load.ts';
import { logFormatFor } from './process-log.ts';

const config = (format?: string) =>
  loadConfig({ file: null, env: {}, overrides: format ? { 'observability.log_format': format } : {} });

describe('process log format', () => {
  test('case=auto is human text for dev on a terminal, JSON otherwise', () => {
    assert.equal(logFormatFor(config(), 'dev', true), 'pretty');
    assert.equal(logFormatFor(config(), 'dev', false), 'json');
    assert.equal(logFormatFor(config(), 'serve', true), 'json');
    assert.equal(logFormatFor(config('auto'), 'worker', false), 'json');
  });

  test('case=json and pretty are taken as given', () => {
    assert.equal(logFormatFor(config('json'), 'dev', true), 'json');
    assert.equal(logFormatFor(config('pretty'), 'serve', false), 'pretty');
  });

  test('case=other values are refused', () => assert.throws(() => config('yaml')));
});
