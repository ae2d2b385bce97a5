import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  acceptedClaims,
  MAX_ANSWER_BYTES,
  mergeClaims,
  readAnswer,
  withoutProtected,
} from './hook-answer.ts';

test('a token hook answer: claims kept, protected and malformed names dropped', () => {
  const a = readAnswer(
    'before_token_issuance',
    JSON.stringify({
      access_token: { tenant: 'acme', sub: 'x', exp: 1, cnf: {}, 'bad name': 1, empty: null },
      id_token: { plan: 'gold', iss: 'x', nonce: 'y' },
    }),
  );
  assert.deepEqual(a, {
    kind: 'allow',
    claims: { accessToken: { tenant: 'acme' }, idToken: { plan: 'gold' } },
  });
  assert.deepEqual(readAnswer('before_token_issuance', '{}'), {
    kind: 'allow',
    claims: { accessToken: {}, idToken: {} },
  });
});

test('answers that are not answers', () => {
  for (const body of ['', 'not json', '[]', '"x"', '{"access_token": []}', '{"id_token": "x"}'])
    assert.deepEqual(readAnswer('before_token_issuance', body), { kind: 'invalid' }, body);
  for (const body of ['{}', '{"decision": "maybe"}', '[]'])
    assert.deepEqual(readAnswer('before_registration', body), { kind: 'invalid' }, body);
  assert.ok(MAX_ANSWER_BYTES >= 1024);
});

test('a registration hook allows or denies; its reason is cut and cleaned', () => {
  assert.deepEqual(readAnswer('before_registration', '{"decision":"allow"}'), { kind: 'allow' });
  const denied = readAnswer(
    'before_registration',
    JSON.stringify({ decision: 'deny', reason: `a\u0001${'b'.repeat(300)}` }),
  );
  assert.equal(denied.kind, 'deny');
  assert.equal(denied.kind === 'deny' && denied.reason, `a${'b'.repeat(199)}`);
  assert.deepEqual(readAnswer('before_registration', '{"decision":"deny"}'), { kind: 'deny', reason: null });
});

test('an after_sign_in answer is never read', () => {
  assert.deepEqual(readAnswer('after_sign_in', 'anything'), { kind: 'allow' });
});

test('at most 32 claims are taken; later hooks win a name; protected names never pass', () => {
  const many = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`c${i}`, i]));
  assert.equal(Object.keys(acceptedClaims(many) ?? {}).length, 32);
  assert.deepEqual(
    mergeClaims([
      { accessToken: { a: 1, b: 1 }, idToken: {} },
      { accessToken: { b: 2 }, idToken: { c: 3 } },
    ]),
    { accessToken: { a: 1, b: 2 }, idToken: { c: 3 } },
  );
  assert.deepEqual(withoutProtected({ sub: 'x', aud: 'y', ok: true }), { ok: true });
  assert.deepEqual(withoutProtected(undefined), {});
});
