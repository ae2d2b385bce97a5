import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { redactFields } from './log.ts';

describe('log › redaction', () => {
  test('case=a clean entry is passed through as the same object', () => {
    const fields = { request_id: 'r1', realm: 'main', nested: { route: '/x', status: 200 } };
    assert.equal(redactFields(fields), fields);
  });

  test('case=sensitive members are censored at the top, nested and in request headers', () => {
    const fields = {
      password: 'hunter2',
      user: { email: 'a@b.example', name: 'Ann' },
      req: {
        headers: { Authorization: 'Basic abc', cookie: 'pa_sid=1', 'x-transaction-token': 't', host: 'h' },
      },
    };
    assert.deepEqual(redactFields(fields), {
      password: '[redacted]',
      user: { email: '[redacted]', name: 'Ann' },
      req: {
        headers: {
          Authorization: '[redacted]',
          cookie: '[redacted]',
          'x-transaction-token': '[redacted]',
          host: 'h',
        },
      },
    });
    assert.equal(fields.password, 'hunter2', "the caller's object is not changed");
  });

  test('case=an error is left to its serializer; objects in a list are searched', () => {
    const err = new Error('boom');
    const fields = { err, list: [{ token: 'x' }, 'plain'] };
    assert.deepEqual(redactFields(fields), { err, list: [{ token: '[redacted]' }, 'plain'] });
  });
});
