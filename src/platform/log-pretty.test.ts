import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import { createLogger } from './log.ts';
import { prettyLine } from './log-pretty.ts';

function sink() {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      text += chunk.toString();
      done();
    },
  });
  return { stream, text: () => text };
}

describe('log › pretty format', () => {
  test('case=one human line: time, level, message, then the fields', () => {
    const line = prettyLine(
      JSON.stringify({
        level: 40,
        time: Date.UTC(2026, 0, 2, 3, 4, 5, 6),
        service: 'proudauth',
        msg: 'sign-in step failed',
        step: 'password',
        note: 'two words',
      }),
      false,
    );
    assert.equal(line, '03:04:05.006 WARN  sign-in step failed step=password note="two words"\n');
  });

  test('case=an error prints its message, then its stack indented', () => {
    const line = prettyLine(
      JSON.stringify({
        level: 50,
        time: 0,
        msg: 'unhandled error',
        err: { message: 'boom', stack: 'Error: boom\n    at x' },
      }),
      false,
    );
    assert.match(line, /^00:00:00\.000 ERROR unhandled error err=boom\n {4}Error: boom\n {8}at x\n$/);
  });

  test('case=a line that is not JSON passes through', () =>
    assert.equal(prettyLine('plain', false), 'plain'));

  test('case=redaction applies before either format', () => {
    for (const format of ['json', 'pretty'] as const) {
      const s = sink();
      createLogger('info', s.stream, format).info(
        { password: 'hunter2', email: 'a@b.example', nested: { access_token: 'tok-123' } },
        'x',
      );
      assert.doesNotMatch(s.text(), /hunter2|a@b\.example|tok-123/, format);
      assert.match(s.text(), /\[redacted\]/, format);
    }
  });
});
