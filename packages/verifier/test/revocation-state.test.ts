// The bounded-state judgement on its own: which stream events make which tokens fail, and the
// bearer header rule (document 1, Authentication 7; document 2, Revocation exposure).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bearerToken } from '../src/bearer.ts';
import type { AccessClaims } from '../src/offline.ts';
import { RevocationState } from '../src/revocation-state.ts';

const T = Date.parse('2026-11-29T10:00:00Z');
const sec = (ms: number) => Math.floor(ms / 1000);
const claims = (over: Partial<AccessClaims> = {}): AccessClaims => ({
  sub: 'usr_a',
  jti: 'at_1',
  iat: sec(T),
  exp: sec(T) + 300,
  client_id: 'web',
  sid: 'ses_1',
  ...over,
});
const at = (ms: number) => new Date(ms).toISOString();

describe('verifier › revocation state', () => {
  test('case=each event type revokes the tokens it names and no others', () => {
    const s = new RevocationState();
    assert.equal(s.revokedBecause(claims(), 'k1'), null);
    s.apply({ id: '1', type: 'session_ended', occurred_at: at(T), session_id: 'ses_1' });
    assert.match(String(s.revokedBecause(claims(), 'k1')), /session/);
    assert.equal(s.revokedBecause(claims({ sid: 'ses_2' }), 'k1'), null);
    s.apply({ id: '2', type: 'token_revoked', occurred_at: at(T), jti: 'at_9' });
    assert.match(String(s.revokedBecause(claims({ sid: 'ses_2', jti: 'at_9' }), 'k1')), /revoked/);
    s.apply({ id: '3', type: 'key_compromised', occurred_at: at(T), kid: 'k2' });
    assert.match(String(s.revokedBecause(claims({ sid: 'ses_2' }), 'k2')), /key/);
  });

  test('case=an account revocation ends tokens issued at or before it, not after', () => {
    const s = new RevocationState();
    s.apply({
      id: '1',
      type: 'account_revoked',
      occurred_at: at(T),
      user_id: 'usr_a',
      revoked_before: at(T),
    });
    assert.ok(s.revokedBecause(claims({ sid: 'x' }), undefined));
    assert.equal(s.revokedBecause(claims({ sid: 'x', iat: sec(T) + 1 }), undefined), null);
    assert.equal(s.revokedBecause(claims({ sid: 'x', sub: 'usr_b' }), undefined), null);
  });

  test('case=a grant revocation ends the user tokens of that client issued before it', () => {
    const s = new RevocationState();
    s.apply({ id: '1', type: 'grant_revoked', occurred_at: at(T), user_id: 'usr_a', client_id: 'web' });
    assert.ok(s.revokedBecause(claims({ sid: 'x' }), undefined));
    assert.equal(s.revokedBecause(claims({ sid: 'x', client_id: 'other' }), undefined), null);
  });

  test('case=entries older than any live token are forgotten, compromised keys are not', () => {
    const s = new RevocationState();
    s.apply({ id: '1', type: 'session_ended', occurred_at: at(T), session_id: 'ses_1' });
    s.apply({ id: '2', type: 'key_compromised', occurred_at: at(T), kid: 'k2' });
    s.forget(T + 2 * 3600 * 1000);
    assert.equal(s.revokedBecause(claims(), 'k1'), null);
    assert.ok(s.revokedBecause(claims(), 'k2'));
  });

  test('case=only an Authorization bearer header carries a token', () => {
    assert.equal(bearerToken('Bearer abc.def-_~+/='), 'abc.def-_~+/=');
    for (const bad of [undefined, '', 'Basic abc', 'DPoP abc', 'Bearer', 'Bearer a b'])
      assert.throws(
        () => bearerToken(bad),
        (e: Error & { code?: string }) => e.code === 'invalid_token',
      );
  });
});
