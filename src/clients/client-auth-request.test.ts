import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OAuthError, oauthErrorBody } from '../kernel/oauth-error.ts';
import {
  JWT_BEARER_ASSERTION,
  type PresentedCredentials,
  parseBasicCredentials,
  readPresentedCredentials,
} from './client-auth-request.ts';

const limits = { maxTokenBytes: 8192, challengeRealm: 'acme' };
const CHALLENGE = 'Basic realm="acme", charset="UTF-8"';
const b64 = (s: string) => Buffer.from(s, 'utf8').toString('base64');
const basic = (user: string, pass: string) => `Basic ${b64(`${user}:${pass}`)}`;

function read(authorization: string | undefined, form: Record<string, string | string[]> = {}) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(form)) for (const x of [v].flat()) params.append(k, x);
  return readPresentedCredentials({ authorization, form: params }, limits);
}

function refused(fn: () => unknown): OAuthError {
  try {
    fn();
  } catch (e) {
    if (e instanceof OAuthError) return e;
    throw e;
  }
  assert.fail('expected an OAuthError');
}

const invalidClient = (e: OAuthError, challenge: boolean) => {
  assert.equal(e.status, 401);
  assert.deepEqual(oauthErrorBody(e), {
    error: 'invalid_client',
    error_description: 'client authentication failed',
  });
  assert.deepEqual(e.headers, challenge ? { 'www-authenticate': CHALLENGE } : {});
};

describe('client auth request › Basic header', () => {
  const accepted: [string, string, { clientId: string; secret: string }][] = [
    ['plain', basic('web-app', 'pa_cs_abc'), { clientId: 'web-app', secret: 'pa_cs_abc' }],
    [
      'percent-encoded colon in the secret',
      basic('web-app', 's%3Aecret'),
      { clientId: 'web-app', secret: 's:ecret' },
    ],
    [
      'unencoded colon in the secret splits at the first',
      basic('web-app', 'a:b:c'),
      { clientId: 'web-app', secret: 'a:b:c' },
    ],
    ['percent-encoded colon in the id', basic('urn%3Aapp', 'x'), { clientId: 'urn:app', secret: 'x' }],
    ['plus is a space (form encoding)', basic('my+app', 'a+b'), { clientId: 'my app', secret: 'a b' }],
    ['scheme is case-insensitive', `bAsIc ${b64('a:b')}`, { clientId: 'a', secret: 'b' }],
    ['unpadded base64', `Basic ${b64('ab:c').replace(/=+$/, '')}`, { clientId: 'ab', secret: 'c' }],
  ];
  for (const [name, header, want] of accepted) {
    test(`case=accepts ${name}`, () => assert.deepEqual(parseBasicCredentials(header, limits), want));
  }

  const rejected: [string, string][] = [
    ['missing colon', `Basic ${b64('web-app')}`],
    ['empty secret', basic('web-app', '')],
    ['empty client id', basic('', 'secret')],
    ['Bearer scheme', 'Bearer abc.def.ghi'],
    ['DPoP scheme', 'DPoP abc'],
    ['scheme only', 'Basic'],
    ['scheme without space', `Basic${b64('a:b')}`],
    ['not base64', 'Basic a:b'],
    ['trailing garbage in base64', `Basic ${b64('a:b')}x`],
    ['two tokens', `Basic ${b64('a:b')} ${b64('c:d')}`],
    ['invalid UTF-8', `Basic ${Buffer.from([0x61, 0x3a, 0xff]).toString('base64')}`],
    ['bad percent sequence', basic('web-app', '%zz')],
    ['percent-encoded invalid UTF-8', basic('web-app', '%ff')],
    ['control character', basic('web-app', 'a%00b')],
    ['oversized', basic('web-app', 'x'.repeat(limits.maxTokenBytes))],
  ];
  for (const [name, header] of rejected) {
    test(`case=refuses ${name} with a Basic challenge`, () => {
      invalidClient(
        refused(() => parseBasicCredentials(header, limits)),
        true,
      );
    });
  }

  test('case=the size limit counts the whole header value', () => {
    const fits = basic('a', 'x'.repeat(6000));
    assert.ok(fits.length <= limits.maxTokenBytes);
    assert.equal(parseBasicCredentials(fits, limits).secret.length, 6000);
  });
});

describe('client auth request › one method per request', () => {
  const cases: [string, string | undefined, Record<string, string | string[]>, PresentedCredentials][] = [
    ['Basic', basic('a', 's'), {}, { method: 'client_secret_basic', clientId: 'a', secret: 's' }],
    [
      'Basic with the same client_id in the form',
      basic('a', 's'),
      { client_id: 'a' },
      { method: 'client_secret_basic', clientId: 'a', secret: 's' },
    ],
    [
      'post',
      undefined,
      { client_id: 'a', client_secret: 's' },
      { method: 'client_secret_post', clientId: 'a', secret: 's' },
    ],
    ['none', undefined, { client_id: 'spa', grant_type: 'x' }, { method: 'none', clientId: 'spa' }],
    [
      'empty secret is absent',
      undefined,
      { client_id: 'spa', client_secret: '' },
      { method: 'none', clientId: 'spa' },
    ],
    ['empty header is absent', '', { client_id: 'spa' }, { method: 'none', clientId: 'spa' }],
    [
      'assertion',
      undefined,
      { client_assertion: 'a.b.c', client_assertion_type: JWT_BEARER_ASSERTION },
      { method: 'private_key_jwt', clientId: null, assertion: 'a.b.c' },
    ],
  ];
  for (const [name, auth, form, want] of cases) {
    test(`case=reads ${name}`, () => assert.deepEqual(read(auth, form), want));
  }

  const invalidRequest: [string, string | undefined, Record<string, string | string[]>][] = [
    ['Basic and client_secret', basic('a', 's'), { client_id: 'a', client_secret: 's' }],
    [
      'Basic and an assertion',
      basic('a', 's'),
      { client_assertion: 'x', client_assertion_type: JWT_BEARER_ASSERTION },
    ],
    [
      'client_secret and an assertion',
      undefined,
      {
        client_id: 'a',
        client_secret: 's',
        client_assertion: 'x',
        client_assertion_type: JWT_BEARER_ASSERTION,
      },
    ],
    ['Basic and another client_id', basic('a', 's'), { client_id: 'b' }],
    ['repeated client_id', undefined, { client_id: ['a', 'a'], client_secret: 's' }],
    ['repeated client_secret', undefined, { client_id: 'a', client_secret: ['s', 't'] }],
    ['client_secret without client_id', undefined, { client_secret: 's' }],
    ['assertion without its type', undefined, { client_assertion: 'x' }],
    ['assertion type without assertion', undefined, { client_assertion_type: JWT_BEARER_ASSERTION }],
  ];
  for (const [name, auth, form] of invalidRequest) {
    test(`case=refuses ${name} as invalid_request`, () => {
      const e = refused(() => read(auth, form));
      assert.equal(e.status, 400);
      assert.equal(e.error, 'invalid_request');
      assert.deepEqual(e.headers, {});
    });
  }

  test('case=a second method is refused before the header is parsed', () => {
    const e = refused(() => read('Bearer x', { client_id: 'a', client_secret: 's' }));
    assert.equal(e.error, 'invalid_request');
  });

  test('case=no credentials at all is invalid_client with a challenge', () => {
    invalidClient(
      refused(() => read(undefined, { grant_type: 'client_credentials' })),
      true,
    );
  });

  const invalidClientCases: [string, Record<string, string>][] = [
    ['unknown assertion type', { client_assertion: 'x', client_assertion_type: 'urn:example:saml' }],
    ['oversized secret', { client_id: 'a', client_secret: 'x'.repeat(limits.maxTokenBytes + 1) }],
    [
      'oversized assertion',
      { client_assertion: 'x'.repeat(limits.maxTokenBytes + 1), client_assertion_type: JWT_BEARER_ASSERTION },
    ],
    ['control character in client_id', { client_id: 'a\u0000b' }],
    ['non-ASCII client_secret', { client_id: 'a', client_secret: 'sécret' }],
  ];
  for (const [name, form] of invalidClientCases) {
    test(`case=refuses ${name} as invalid_client without a challenge`, () => {
      invalidClient(
        refused(() => read(undefined, form)),
        false,
      );
    });
  }
});
