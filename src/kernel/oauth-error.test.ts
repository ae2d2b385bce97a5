import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { basicChallenge, type OAuthError, oauthError, oauthErrorBody } from './oauth-error.ts';

describe('oauth errors', () => {
  test('case=helpers give the RFC 6749 codes and statuses', () => {
    const table: [OAuthError, number, string][] = [
      [oauthError.invalidRequest('x'), 400, 'invalid_request'],
      [oauthError.invalidClient(), 401, 'invalid_client'],
      [oauthError.invalidGrant(), 400, 'invalid_grant'],
      [oauthError.unauthorizedClient(), 400, 'unauthorized_client'],
      [oauthError.unsupportedGrantType(), 400, 'unsupported_grant_type'],
      [oauthError.invalidScope(), 400, 'invalid_scope'],
      [oauthError.invalidTarget(), 400, 'invalid_target'],
      [oauthError.temporarilyUnavailable(), 503, 'temporarily_unavailable'],
    ];
    for (const [e, status, code] of table) {
      assert.ok(e instanceof Error);
      assert.deepEqual([e.status, e.error], [status, code]);
    }
    assert.deepEqual(oauthError.temporarilyUnavailable('no key', 2).headers, { 'retry-after': '2' });
  });

  test('case=invalid_client has one description whatever the reason; debug stays out of the body', () => {
    const a = oauthError.invalidClient({ debug: 'unknown_client' });
    const b = oauthError.invalidClient({ debug: 'secret_mismatch', challenge: basicChallenge('acme') });
    assert.deepEqual(oauthErrorBody(a), oauthErrorBody(b));
    assert.deepEqual(oauthErrorBody(a), {
      error: 'invalid_client',
      error_description: 'client authentication failed',
    });
    assert.equal(a.debug, 'unknown_client');
    assert.deepEqual(a.headers, {});
    assert.deepEqual(b.headers, { 'www-authenticate': 'Basic realm="acme", charset="UTF-8"' });
  });

  test('case=body omits an absent description and keeps it within the allowed characters', () => {
    assert.deepEqual(oauthErrorBody(oauthError.invalidGrant()), { error: 'invalid_grant' });
    assert.deepEqual(oauthErrorBody(oauthError.invalidScope('scope "x\\y" é')), {
      error: 'invalid_scope',
      error_description: 'scope ?x?y? ?',
    });
  });

  test('case=challenge realm is a quoted string', () => {
    assert.equal(basicChallenge('a"b\\c'), 'Basic realm="a\\"b\\\\c", charset="UTF-8"');
  });
});
