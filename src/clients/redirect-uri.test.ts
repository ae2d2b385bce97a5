// Table-driven corpus for the redirect URI rules (spec doc 1 RedirectURI row; decision D1, 2;
// Keycloak's published redirect URI vectors among them).

import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, test } from 'node:test';
import {
  type ClientType,
  type Environment,
  isLoopbackHost,
  matchRedirectUri,
  type RedirectUriRejection,
  validateRedirectUri,
} from './redirect-uri.ts';

type Ctx = { clientType: ClientType; environment: Environment };
const dev = (clientType: ClientType = 'web'): Ctx => ({ clientType, environment: 'development' });
const prod = (clientType: ClientType = 'web'): Ctx => ({ clientType, environment: 'production' });

const accepted: Array<[string, Ctx]> = [
  // an internationalized name in its ASCII form
  ['https://xn--bcher-kva.example/cb', dev()],
  ['https://app.example.com/callback', prod()],
  ['https://app.example.com/cb?next=%2Fhome', prod()],
  ['https://app.example.com/cb?x=%2e%2E%5c%252e', prod()],
  ['https://app.example.com/cb?next=/../x', prod()],
  ['https://app.example.com/cb?email=a@b.example', prod()],
  ['https://app.example.com', prod()],
  ['https://app.example.com?x=1', prod()],
  ['https://app.example.com:8443/cb', prod()],
  ['https://app.example.com/a%20b/%C3%A9', prod()],
  ['https://app.example.com/', prod('spa')],
  ['https://my_host.example/cb', prod()],
  ['https://app.example.com./cb', prod()],
  ['https://localhost/cb', dev()],
  ['https://127.0.0.1/cb', dev()],
  ['https://[::1]/cb', dev()],
  ['https://[::ffff:7f00:1]/cb', dev()],
  ['http://localhost/cb', dev()],
  ['http://localhost:3000/cb', dev('spa')],
  ['http://127.0.0.1/callback', prod('native')],
  ['http://127.0.0.1:53682/callback', prod('native')],
  ['http://[::1]:53682/callback', prod('native')],
  ['http://127.0.0.1/device', prod('device')],
  ['com.example.app:/callback', prod('native')],
  ['com.example.app:/oauth2redirect/example-provider', prod('native')],
  ['com.example.app://callback', prod('native')],
  ['com.example.app://callback/path?x=1', prod('native')],
  ['io.1password.app:/cb', prod('native')],
  ['https://a.example/' + 'x'.repeat(2048 - 'https://a.example/'.length), prod()],
];

const rejected: Array<[string, Ctx, RedirectUriRejection]> = [
  // empty and length
  ['', dev(), 'empty'],
  ['https://a.example/' + 'x'.repeat(2049 - 'https://a.example/'.length), dev(), 'too_long'],
  ['https://a.example/cb?q=' + '\u00e9'.repeat(1014), dev(), 'too_long'],
  // relative (Keycloak OAuthRedirectUriTest)
  ['/callback', dev(), 'not_absolute'],
  ['callback', dev(), 'not_absolute'],
  ['//a.example/cb', dev(), 'not_absolute'],
  ['1http://a.example/', dev(), 'not_absolute'],
  // wildcard, backslash
  ['https://*.example.com/cb', dev(), 'wildcard'],
  ['https://a.example/*', dev(), 'wildcard'],
  ['https://a.example/cb?x=*', dev(), 'wildcard'],
  ['https://a.example\\@evil.example/', dev(), 'backslash'],
  ['https://a.example/cb\\x', dev(), 'backslash'],
  // whitespace of every class, controls and format characters
  ['https://a.example/c b', dev(), 'whitespace'],
  [' https://a.example/cb', dev(), 'whitespace'],
  ['https://a.example/cb ', dev(), 'whitespace'],
  ['https://a.example/c\tb', dev(), 'whitespace'],
  ['https://a.example/c\nb', dev(), 'whitespace'],
  ['https://a.example/c\rb', dev(), 'whitespace'],
  ['https://a.example/c\u000bb', dev(), 'whitespace'],
  ['https://a.example/c\u00a0b', dev(), 'whitespace'],
  ['https://a.example/c\u2028b', dev(), 'whitespace'],
  ['https://a.example/c\u3000b', dev(), 'whitespace'],
  ['https://a.example/c\u0085b', dev(), 'whitespace'],
  ['https://a.example/c\u0000b', dev(), 'control_character'],
  ['https://a.example/c\u007fb', dev(), 'control_character'],
  ['https://a.example/c\u200bb', dev(), 'control_character'],
  ['https://a.example/c\u202eb', dev(), 'control_character'],
  ['https://a.example/c\ufeffb', dev(), 'control_character'],
  ['https://a.example/caf\u00e9', dev(), 'non_ascii'],
  ['https://b\u00fccher.example/', dev(), 'non_ascii'],
  ['https://\uff4c\uff4f\uff43\uff41\uff4c\uff48\uff4f\uff53\uff54/', prod(), 'non_ascii'],
  // fragment, including an empty one
  ['https://a.example/cb#', dev(), 'fragment'],
  ['https://a.example/cb#x', dev(), 'fragment'],
  ['https://a.example/cb?x=1#', dev(), 'fragment'],
  // userinfo
  ['https://user@a.example/cb', dev(), 'userinfo'],
  ['https://user:pw@a.example/cb', dev(), 'userinfo'],
  ['https://a.example@evil.example/cb', dev(), 'userinfo'],
  ['https://a.example/user@evil.example', dev(), 'userinfo'],
  ['http://localhost@evil.example/', dev('native'), 'userinfo'],
  // percent-encoding syntax
  ['https://a.example/c%zzb', dev(), 'invalid_percent_encoding'],
  ['https://a.example/cb?x=%', dev(), 'invalid_percent_encoding'],
  // dot segments and encoded separators (Keycloak vectors, decision D2)
  ['https://a.example/..', dev(), 'dot_segment'],
  ['https://a.example/cb/../admin', dev(), 'dot_segment'],
  ['https://a.example/./cb', dev(), 'dot_segment'],
  ['https://a.example/cb/.', dev(), 'dot_segment'],
  ['com.example.app:/../cb', dev('native'), 'dot_segment'],
  ['https://a.example/%2E%2E', dev(), 'encoded_separator'],
  ['https://a.example/cb/%2e%2e/admin', dev(), 'encoded_separator'],
  ['https://a.example/cb%2F%2E%2E%2Fadmin', dev(), 'encoded_separator'],
  ['https://a.example/cb%2fadmin', dev(), 'encoded_separator'],
  ['https://a.example/cb%5Cadmin', dev(), 'encoded_separator'],
  ['https://a.example/cb/.%2e/admin', dev(), 'encoded_separator'],
  ['https://a.example/%252E%252E/admin', dev(), 'encoded_separator'],
  ['https://a.example/%25252e', dev(), 'encoded_separator'],
  ['https://a.example/%252f', dev(), 'encoded_separator'],
  // https needs a host
  ['https:a.example/cb', dev(), 'https_needs_host'],
  ['https:/a.example/cb', dev(), 'https_needs_host'],
  ['https:///a.example/cb', dev(), 'https_needs_host'],
  ['https://:443/cb', dev(), 'https_needs_host'],
  ['http:/localhost/cb', dev(), 'missing_host'],
  // host and port syntax
  ['https://a..example/', dev(), 'invalid_host'],
  ['https://-a.example/', dev(), 'invalid_host'],
  ['https://a%2eexample/', dev(), 'invalid_host'],
  ['https://l%6fcalhost/', prod(), 'invalid_host'],
  ['https://[::1/', dev(), 'invalid_host'],
  ['https://[::1]x/', dev(), 'invalid_host'],
  ['https://a.example:/cb', dev(), 'invalid_port'],
  ['https://a.example:0/cb', dev(), 'invalid_port'],
  ['https://a.example:65536/cb', dev(), 'invalid_port'],
  ['https://a.example:8x/cb', dev(), 'invalid_port'],
  // https to loopback in production, in every spelling
  ['https://localhost/cb', prod(), 'loopback_in_production'],
  ['https://LOCALHOST/cb', prod(), 'loopback_in_production'],
  ['https://localhost./cb', prod(), 'loopback_in_production'],
  ['https://app.localhost/cb', prod(), 'loopback_in_production'],
  ['https://127.0.0.1/cb', prod(), 'loopback_in_production'],
  ['https://127.8.9.10/cb', prod(), 'loopback_in_production'],
  ['https://127.1/cb', prod(), 'loopback_in_production'],
  ['https://0x7f.0.0.1/cb', prod(), 'loopback_in_production'],
  ['https://2130706433/cb', prod(), 'loopback_in_production'],
  ['https://0177.0.0.1/cb', prod(), 'loopback_in_production'],
  ['https://127.0.0.1./cb', prod(), 'loopback_in_production'],
  ['https://0.0.0.0/cb', prod(), 'loopback_in_production'],
  ['https://[::1]/cb', prod(), 'loopback_in_production'],
  ['https://[::]/cb', prod(), 'loopback_in_production'],
  ['https://[0:0:0:0:0:0:0:1]/cb', prod(), 'loopback_in_production'],
  ['https://[::ffff:127.0.0.1]/cb', prod(), 'loopback_in_production'],
  ['https://[::ffff:7f00:1]/cb', prod(), 'loopback_in_production'],
  ['https://[64:ff9b::7f00:1]/cb', prod(), 'loopback_in_production'],
  ['https://localhost/cb', prod('native'), 'loopback_in_production'],
  ['http://localhost/cb', prod('native'), 'loopback_in_production'],
  ['http://localhost:8080/cb', prod(), 'loopback_in_production'],
  // http only for loopback literals (native, device) or localhost outside production
  ['http://app.example.com/cb', dev(), 'http_not_allowed'],
  ['http://app.example.com/cb', dev('native'), 'http_not_allowed'],
  ['http://127.0.0.1/cb', dev('web'), 'http_not_allowed'],
  ['http://127.0.0.1/cb', dev('spa'), 'http_not_allowed'],
  ['http://[::1]/cb', prod('service'), 'http_not_allowed'],
  ['http://127.0.0.2/cb', dev('native'), 'http_not_allowed'],
  ['http://127.1/cb', dev('native'), 'http_not_allowed'],
  ['http://app.localhost/cb', dev(), 'http_not_allowed'],
  ['http://localhost./cb', dev(), 'http_not_allowed'],
  // other schemes
  ['file:///etc/passwd', dev('native'), 'scheme_not_allowed'],
  ['javascript:alert(1)', dev('native'), 'scheme_not_allowed'],
  ['JavaScript:alert(1)', dev('native'), 'scheme_not_allowed'],
  ['data:text/html,x', dev('native'), 'scheme_not_allowed'],
  ['vbscript:msgbox', dev('native'), 'scheme_not_allowed'],
  ['blob:https://a.example/x', dev('native'), 'scheme_not_allowed'],
  ['ftp://a.example/x', dev('native'), 'scheme_not_allowed'],
  ['wss://a.example/x', dev('native'), 'scheme_not_allowed'],
  ['myapp:/callback', dev('native'), 'scheme_not_allowed'],
  ['com.example+x.app:/cb', dev('native'), 'scheme_not_allowed'],
  ['com.example.app:/callback', dev('web'), 'scheme_not_allowed'],
  ['com.example.app:/callback', dev('device'), 'scheme_not_allowed'],
  ['com.example.app:callback', dev('native'), 'opaque_path'],
  ['com.example.app:', dev('native'), 'opaque_path'],
  ['com.example.app://', dev('native'), 'missing_host'],
  // parser failures and anything the parser would rewrite
  ['https://a.1/', dev(), 'invalid_url'],
  ['https://xn--a.example/', dev(), 'invalid_url'],
  // the same on every Node.js version: 22 and later parse a label that does not decode
  ['https://app.xn--a-ecp.example/cb', dev(), 'invalid_url'],
  ['HTTPS://a.example/cb', dev(), 'not_canonical'],
  ['https://A.example/cb', dev(), 'not_canonical'],
  ['https://a.example:443/cb', dev(), 'not_canonical'],
  ['https://a.example:08443/cb', dev(), 'not_canonical'],
  ['https://127.1/cb', dev(), 'not_canonical'],
  ['https://0x7f.0.0.1/cb', dev(), 'not_canonical'],
  ['https://2130706433/cb', dev(), 'not_canonical'],
  ['https://0177.0.0.1/cb', dev(), 'not_canonical'],
  ['https://[0:0:0:0:0:0:0:1]/cb', dev(), 'not_canonical'],
  ['https://[::ffff:127.0.0.1]/cb', dev(), 'not_canonical'],
  ['https://a.example/a<b', dev(), 'not_canonical'],
  ["https://a.example/cb?q='", dev(), 'not_canonical'],
  ['https://a.example/cb?q="', dev(), 'not_canonical'],
  ['Com.Example.App:/cb', dev('native'), 'not_canonical'],
];

describe('validateRedirectUri', () => {
  for (const [raw, ctx] of accepted) {
    test(`accepts ${JSON.stringify(raw).slice(0, 90)} (${ctx.clientType}, ${ctx.environment})`, () => {
      assert.deepEqual(validateRedirectUri(raw, ctx), { ok: true });
    });
  }
  for (const [raw, ctx, reason] of rejected) {
    test(`refuses ${JSON.stringify(raw).slice(0, 90)} (${ctx.clientType}, ${ctx.environment}): ${reason}`, () => {
      assert.deepEqual(validateRedirectUri(raw, ctx), { ok: false, reason });
    });
  }

  test('length is counted in UTF-8 bytes, not UTF-16 units', () => {
    const prefix = 'https://a.example/cb?q=';
    const over = prefix + '\u00e9'.repeat(1012) + 'xx'; // 2049 bytes, 1037 units
    assert.equal(Buffer.byteLength(over), 2049);
    assert.deepEqual(validateRedirectUri(over, dev()), { ok: false, reason: 'too_long' });
    const at = prefix + '\u00e9'.repeat(1012) + 'x'; // 2048 bytes: past the length rule
    assert.equal(Buffer.byteLength(at), 2048);
    assert.deepEqual(validateRedirectUri(at, dev()), { ok: false, reason: 'non_ascii' });
  });
});

describe('isLoopbackHost', () => {
  for (const h of [
    'localhost',
    'LocalHost.',
    'x.localhost',
    '127.0.0.1',
    '127.255.255.255',
    '0.0.0.0',
    '[::1]',
  ]) {
    test(`${h} is loopback`, () => assert.equal(isLoopbackHost(h), true));
  }
  for (const h of [
    'localhost.example',
    'notlocalhost',
    '128.0.0.1',
    '126.255.255.255',
    '[2001:db8::1]',
    '[1::1]',
    '[::ffff:8000:1]',
  ]) {
    test(`${h} is not loopback`, () => assert.equal(isLoopbackHost(h), false));
  }
});

describe('matchRedirectUri', () => {
  const cases: Array<[string, string[], ClientType, boolean]> = [
    ['https://a.example/cb', ['https://a.example/cb'], 'web', true],
    ['https://a.example/cb', ['https://b.example/cb', 'https://a.example/cb'], 'web', true],
    // case differences in host and scheme do not match (Keycloak)
    ['https://A.example/cb', ['https://a.example/cb'], 'web', false],
    ['HTTPS://a.example/cb', ['https://a.example/cb'], 'web', false],
    ['https://a.example/CB', ['https://a.example/cb'], 'web', false],
    // no normalization of slashes, default ports or percent-encoding
    ['https://a.example/', ['https://a.example'], 'web', false],
    ['https://a.example:443/cb', ['https://a.example/cb'], 'web', false],
    ['https://a.example/c%62', ['https://a.example/cb'], 'web', false],
    ['https://a.example/cb/', ['https://a.example/cb'], 'web', false],
    // query must match exactly
    ['https://a.example/cb?x=1', ['https://a.example/cb'], 'web', false],
    ['https://a.example/cb', ['https://a.example/cb?x=1'], 'web', false],
    ['https://a.example/cb?x=1&y=2', ['https://a.example/cb?y=2&x=1'], 'web', false],
    ['https://a.example/cb?x=1', ['https://a.example/cb?x=1'], 'web', true],
    // prefix registrations are not wildcards
    ['https://a.example/cb/extra', ['https://a.example/cb'], 'web', false],
    ['https://a.example/cb/../admin', ['https://a.example/cb'], 'web', false],
    // localhost matches its path exactly and is never port-flexible
    ['http://localhost/myapp', ['http://localhost/myapp'], 'native', true],
    ['http://localhost/', ['http://localhost/myapp'], 'native', false],
    ['http://localhost:8080/myapp', ['http://localhost/myapp'], 'native', false],
    ['http://localhost:8080/myapp', ['http://localhost:9090/myapp'], 'native', false],
    // native loopback IP literals: any port, everything else exact
    ['http://127.0.0.1:53682/callback', ['http://127.0.0.1/callback'], 'native', true],
    ['http://127.0.0.1/callback', ['http://127.0.0.1:8080/callback'], 'native', true],
    ['http://127.0.0.1:1/callback', ['http://127.0.0.1:8080/callback'], 'native', true],
    ['http://[::1]:65535/callback', ['http://[::1]/callback'], 'native', true],
    ['http://127.0.0.1:53682', ['http://127.0.0.1'], 'native', true],
    ['http://127.0.0.1:53682/callback?x=1', ['http://127.0.0.1/callback?x=1'], 'native', true],
    ['http://127.0.0.1:53682/', ['http://127.0.0.1/myapp'], 'native', false],
    ['http://127.0.0.1:53682/callback?x=2', ['http://127.0.0.1/callback?x=1'], 'native', false],
    ['http://127.0.0.1:53682/Callback', ['http://127.0.0.1/callback'], 'native', false],
    ['http://[::1]:53682/callback', ['http://127.0.0.1/callback'], 'native', false],
    ['http://127.0.0.2:53682/callback', ['http://127.0.0.1/callback'], 'native', false],
    ['http://127.0.0.1:65536/callback', ['http://127.0.0.1/callback'], 'native', false],
    ['http://127.0.0.1:080/callback', ['http://127.0.0.1/callback'], 'native', false],
    ['http://127.0.0.1:/callback', ['http://127.0.0.1/callback'], 'native', false],
    ['http://127.0.0.1:53682@evil.example/callback', ['http://127.0.0.1/callback'], 'native', false],
    ['https://127.0.0.1:53682/callback', ['https://127.0.0.1/callback'], 'native', false],
    ['HTTP://127.0.0.1:53682/callback', ['http://127.0.0.1/callback'], 'native', false],
    // the port exception is for native clients only
    ['http://127.0.0.1:53682/callback', ['http://127.0.0.1/callback'], 'device', false],
    ['http://127.0.0.1:53682/callback', ['http://127.0.0.1/callback'], 'web', false],
    ['https://a.example/cb', [], 'web', false],
  ];
  for (const [requested, registered, type, expected] of cases) {
    test(`${requested} vs ${registered.join(' ')} (${type}) -> ${expected}`, () => {
      assert.equal(matchRedirectUri(requested, registered, type), expected);
    });
  }
});
