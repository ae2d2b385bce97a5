// The metadata rules of dynamic registration (registration-metadata.ts): defaults, the client type
// a registration makes, scopes within open_scopes, and which RFC 7591 error each refusal is.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readClientMetadata } from './registration-metadata.ts';

const OPEN = ['openid', 'profile', 'email'];
const CB = 'https://app.example.com/cb';
const read = (body: unknown, env: 'development' | 'production' = 'production') =>
  readClientMetadata(body, OPEN, env);

describe('registration metadata', () => {
  test('defaults: a confidential web client with the code grant and every open scope', () => {
    const m = read({ redirect_uris: [CB] });
    assert.ok(m.ok);
    assert.equal(m.type, 'web');
    assert.equal(m.draft.tokenEndpointAuthMethod, 'client_secret_basic');
    assert.deepEqual(m.draft.grantTypes, ['authorization_code']);
    assert.deepEqual(m.scopes, OPEN);
    assert.equal(m.name, null);
    assert.deepEqual(m.draft.allowedOrigins, []);
  });

  test('none makes a spa (with its redirect origins) or, for application_type native, a native client', () => {
    const spa = read({
      redirect_uris: [CB, 'https://app.example.com/other'],
      token_endpoint_auth_method: 'none',
    });
    assert.ok(spa.ok);
    assert.equal(spa.type, 'spa');
    assert.deepEqual(spa.draft.allowedOrigins, ['https://app.example.com']);
    const native = read({
      redirect_uris: ['http://127.0.0.1/cb'],
      token_endpoint_auth_method: 'none',
      application_type: 'native',
    });
    assert.ok(native.ok, JSON.stringify(native));
    assert.equal(native.type, 'native');
    assert.deepEqual(native.draft.allowedOrigins, []);
  });

  test('unknown members are ignored; display members are kept', () => {
    const m = read({
      redirect_uris: [CB],
      foo: 1,
      client_uri: 'https://app.example.com',
      contacts: ['a@b.c'],
    });
    assert.ok(m.ok);
    assert.deepEqual(m.display, {
      application_type: 'web',
      client_uri: 'https://app.example.com',
      contacts: ['a@b.c'],
    });
  });

  const refusals: [string, unknown, string, string][] = [
    ['not an object', [1], 'invalid_client_metadata', ''],
    ['no redirect URI', { redirect_uris: [] }, 'invalid_redirect_uri', 'redirect_uris'],
    [
      'a redirect URI over http in production',
      { redirect_uris: ['http://app.example.com/cb'] },
      'invalid_redirect_uri',
      'redirect_uris[0]',
    ],
    ['redirect_uris not a list', { redirect_uris: CB }, 'invalid_redirect_uri', 'redirect_uris'],
    [
      'a scope outside open_scopes',
      { redirect_uris: [CB], scope: 'openid address' },
      'invalid_client_metadata',
      'scope',
    ],
    [
      'the device grant',
      { redirect_uris: [CB], grant_types: ['urn:ietf:params:oauth:grant-type:device_code'] },
      'invalid_client_metadata',
      'grant_types[0]',
    ],
    [
      'an unknown auth method',
      { redirect_uris: [CB], token_endpoint_auth_method: 'client_secret_jwt' },
      'invalid_client_metadata',
      'token_endpoint_auth_method',
    ],
    [
      'private_key_jwt without keys',
      { redirect_uris: [CB], token_endpoint_auth_method: 'private_key_jwt' },
      'invalid_client_metadata',
      'jwks',
    ],
    [
      'a logo over http in production',
      { redirect_uris: [CB], logo_uri: 'http://app.example.com/l.png' },
      'invalid_client_metadata',
      'logo_uri',
    ],
    [
      'a name with a control character',
      { redirect_uris: [CB], client_name: 'a\u0007b' },
      'invalid_client_metadata',
      'client_name',
    ],
    [
      '11 contacts',
      { redirect_uris: [CB], contacts: Array.from({ length: 11 }, (_, i) => `c${i}@x.y`) },
      'invalid_client_metadata',
      'contacts',
    ],
  ];
  for (const [name, body, error, field] of refusals) {
    test(`refused: ${name}`, () => {
      const m = read(body);
      assert.equal(m.ok, false, name);
      if (m.ok) return;
      assert.equal(m.error, error, name);
      assert.ok(
        m.errors.some((e) => e.field === field),
        `${name}: ${JSON.stringify(m.errors)}`,
      );
    });
  }

  test('http display URIs are allowed outside production', () => {
    assert.ok(read({ redirect_uris: [CB], logo_uri: 'http://localhost:3000/l.png' }, 'development').ok);
  });
});
