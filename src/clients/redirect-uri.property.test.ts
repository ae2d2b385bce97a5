// Property tests for the redirect URI validator and matcher (decisions D1 and D2). fast-check
// reports the seed and path of any failure; replay with fc.assert(prop, { seed, path }) and keep it
// as a unit case in redirect-uri.test.ts. FC_NUM_RUNS raises the run count for long runs.

import assert from 'node:assert/strict';
import { Buffer } from 'node:buffer';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { type ClientType, type Environment, matchRedirectUri, validateRedirectUri } from './redirect-uri.ts';

const numRuns = Number(process.env.FC_NUM_RUNS ?? 500);
const params = { numRuns };

const CLIENT_TYPES: readonly ClientType[] = ['web', 'spa', 'native', 'device', 'service'];
const ENVIRONMENTS: readonly Environment[] = ['development', 'production'];
const ALL_CTX = CLIENT_TYPES.flatMap((clientType) =>
  ENVIRONMENTS.map((environment) => ({ clientType, environment })),
);
type Ctx = (typeof ALL_CTX)[number];

const ok = (raw: string, ctx: Ctx) => validateRedirectUri(raw, ctx).ok;

// ---- generators of accepted URIs, split so the path can be located ----

type Parts = { prefix: string; path: string; query: string; ctx: Ctx };
const uriOf = (p: Parts) => p.prefix + p.path + p.query;

const label = fc.stringMatching(/^[a-z0-9](?:[a-z0-9-]{0,6}[a-z0-9])?$/).filter((l) => !l.startsWith('xn--'));
const domain = fc
  .tuple(fc.array(label, { minLength: 1, maxLength: 3 }), fc.stringMatching(/^[a-z]{2,6}$/))
  .map(([labels, tld]) => [...labels, tld].join('.'))
  .filter((d) => !d.split('.').includes('localhost'));
const port = fc.option(
  fc
    .integer({ min: 1, max: 65535 })
    .filter((p) => p !== 80 && p !== 443)
    .map((p) => `:${p}`),
  { nil: '' },
);
const segment = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: fc.stringMatching(/^[A-Za-z0-9_~!$&'()+,;=:-]{1,6}$/) },
      { weight: 1, arbitrary: fc.constantFrom('%20', '%41', '%C3%A9', '.', '.x') },
    ),
    { minLength: 1, maxLength: 3 },
  )
  .map((xs) => xs.join(''))
  .filter((s) => s !== '.' && s !== '..');
const slashPath = fc.array(segment, { maxLength: 4 }).map((segs) => '/' + segs.join('/'));
const query = fc.option(
  fc
    .array(
      fc.oneof(
        fc.stringMatching(/^[A-Za-z0-9=&/._~:@!$,;?-]{1,6}$/),
        fc.constantFrom('%2F', '%2e', '%5C', '%252e', '/../'),
      ),
      { maxLength: 4 },
    )
    .map((xs) => '?' + xs.join('')),
  { nil: '' },
);
const anyType = fc.constantFrom(...CLIENT_TYPES);
const anyEnv = fc.constantFrom(...ENVIRONMENTS);

const httpsParts: fc.Arbitrary<Parts> = fc
  .record({
    host: domain,
    port,
    path: fc.oneof({ weight: 1, arbitrary: fc.constant('') }, { weight: 5, arbitrary: slashPath }),
    query,
    clientType: anyType,
    environment: anyEnv,
  })
  .map((r) => ({
    prefix: `https://${r.host}${r.port}`,
    path: r.path,
    query: r.query,
    ctx: { clientType: r.clientType, environment: r.environment },
  }));
const loopbackParts: fc.Arbitrary<Parts> = fc
  .record({
    host: fc.constantFrom('127.0.0.1', '[::1]'),
    port,
    path: slashPath,
    query,
    clientType: fc.constantFrom<ClientType>('native', 'device'),
    environment: anyEnv,
  })
  .map((r) => ({
    prefix: `http://${r.host}${r.port}`,
    path: r.path,
    query: r.query,
    ctx: { clientType: r.clientType, environment: r.environment },
  }));
const localhostParts: fc.Arbitrary<Parts> = fc
  .record({ port, path: slashPath, query, clientType: anyType })
  .map((r) => ({
    prefix: `http://localhost${r.port}`,
    path: r.path,
    query: r.query,
    ctx: { clientType: r.clientType, environment: 'development' as const },
  }));
const privateUseParts: fc.Arbitrary<Parts> = fc
  .record({
    scheme: fc.tuple(fc.stringMatching(/^[a-z]{2,5}$/), label).map(([a, b]) => `${a}.${b}.app`),
    authority: fc.option(domain, { nil: null }),
    path: slashPath,
    query,
    environment: anyEnv,
  })
  .map((r) => ({
    prefix: r.authority === null ? `${r.scheme}:` : `${r.scheme}://${r.authority}`,
    path: r.path,
    query: r.query,
    ctx: { clientType: 'native' as const, environment: r.environment },
  }));

const acceptedParts = fc.oneof(httpsParts, loopbackParts, localhostParts, privateUseParts);

const trickyPieces = [
  'https://',
  'http://',
  'com.example.app:',
  'HTTPS://',
  'javascript:',
  '//',
  '/',
  'a',
  'A',
  'example',
  '.com',
  '.',
  '..',
  'localhost',
  '127.0.0.1',
  '127.1',
  '0x7f.0.0.1',
  '2130706433',
  '[::1]',
  '[::ffff:127.0.0.1]',
  ':',
  ':8080',
  ':443',
  '@',
  '?',
  '#',
  '*',
  '\\',
  ' ',
  '\t',
  '%2e',
  '%2F',
  '%5c',
  '%252e',
  '%',
  '\u00e9',
  'x=1',
  '&',
  '-',
];
const tricky = fc
  .array(fc.constantFrom(...trickyPieces), { minLength: 1, maxLength: 10 })
  .map((xs) => xs.join(''));

const candidates = fc.oneof(
  acceptedParts.map(uriOf),
  fc.webUrl({ validSchemes: ['https', 'http'], withQueryParameters: true, withFragments: true }),
  tricky,
);

/** The documented canonical equivalent: an http(s) URI with an empty path gains `/` after its authority. */
function stableUnderParsing(raw: string): boolean {
  const href = new URL(raw).href;
  if (href === raw) return true;
  const m = /^(https?:\/\/[^/?]*)(\?.*)?$/s.exec(raw);
  return m !== null && href === (m[1] ?? '') + '/' + (m[2] ?? '');
}

describe('validateRedirectUri properties (F2)', () => {
  test('the generators of accepted URIs are accepted in their context', () => {
    fc.assert(
      fc.property(acceptedParts, (p) => {
        assert.deepEqual(validateRedirectUri(uriOf(p), p.ctx), { ok: true }, uriOf(p));
      }),
      params,
    );
  });

  test('accepted in production implies accepted in development', () => {
    fc.assert(
      fc.property(candidates, anyType, (raw, clientType) => {
        if (ok(raw, { clientType, environment: 'production' })) {
          assert.ok(ok(raw, { clientType, environment: 'development' }), raw);
        }
      }),
      params,
    );
  });

  test('accepted for any client type (web in particular) implies accepted for native', () => {
    fc.assert(
      fc.property(candidates, anyType, anyEnv, (raw, clientType, environment) => {
        if (ok(raw, { clientType, environment }))
          assert.ok(ok(raw, { clientType: 'native', environment }), raw);
      }),
      params,
    );
  });

  test('accepted implies stable under WHATWG parsing (or the documented root-slash equivalent)', () => {
    fc.assert(
      fc.property(candidates, (raw) => {
        if (ALL_CTX.some((ctx) => ok(raw, ctx))) assert.ok(stableUnderParsing(raw), raw);
      }),
      params,
    );
  });

  const pathTokens = [
    '*',
    '\\',
    ' ',
    '\t',
    '\u00a0',
    '#x',
    'user@',
    '/../',
    '/./',
    '%2e',
    '%2F',
    '%5C',
    '%252e',
  ];
  test('inserting a forbidden element into the path of an accepted URI is refused in every context', () => {
    fc.assert(
      fc.property(acceptedParts, fc.constantFrom(...pathTokens), fc.nat(), (p, token, n) => {
        const at = n % (p.path.length + 1);
        const raw = p.prefix + p.path.slice(0, at) + token + p.path.slice(at) + p.query;
        for (const ctx of ALL_CTX) assert.equal(ok(raw, ctx), false, `${raw} ${JSON.stringify(ctx)}`);
      }),
      params,
    );
  });

  const anywhereTokens = ['*', '\\', ' ', '\t', '\u00a0', '\u2003', '\u0000', '\u200b', '#', '#x'];
  test('inserting wildcard, backslash, whitespace, a control character or a fragment anywhere is refused', () => {
    fc.assert(
      fc.property(acceptedParts, fc.constantFrom(...anywhereTokens), fc.nat(), (p, token, n) => {
        const uri = uriOf(p);
        const at = n % (uri.length + 1);
        const raw = uri.slice(0, at) + token + uri.slice(at);
        for (const ctx of ALL_CTX)
          assert.equal(ok(raw, ctx), false, `${JSON.stringify(raw)} ${ctx.clientType}`);
      }),
      params,
    );
  });

  test('the 2048-byte limit is measured in UTF-8 bytes', () => {
    const prefix = 'https://a.example/cb?q=';
    const fillers = fc.array(fc.constantFrom('a', '\u00e9', '\u20ac', '\u{1f600}'), {
      minLength: 1,
      maxLength: 8,
    });
    fc.assert(
      fc.property(fc.integer({ min: 2030, max: 2070 }), fillers, (bytes, alphabet) => {
        let raw = prefix;
        let i = 0;
        while (Buffer.byteLength(raw) < bytes) {
          const ch = alphabet[i++ % alphabet.length] ?? 'a';
          raw += Buffer.byteLength(raw + ch) <= bytes ? ch : 'a';
        }
        assert.equal(Buffer.byteLength(raw), bytes);
        const verdict = validateRedirectUri(raw, { clientType: 'web', environment: 'development' });
        const tooLong = !verdict.ok && verdict.reason === 'too_long';
        assert.equal(tooLong, bytes > 2048, `${bytes} bytes, ${raw.length} units`);
        if (/^[\x21-\x7e]*$/.test(raw)) assert.equal(verdict.ok, bytes <= 2048);
      }),
      params,
    );
  });
});

describe('matchRedirectUri properties', () => {
  test('an accepted URI matches its own registration', () => {
    fc.assert(
      fc.property(acceptedParts, (p) => {
        assert.ok(matchRedirectUri(uriOf(p), [uriOf(p)], p.ctx.clientType));
      }),
      params,
    );
  });

  test('a scheme or host spelled in another case never matches', () => {
    fc.assert(
      fc.property(
        acceptedParts.chain((p) => fc.tuple(fc.constant(p), fc.mixedCase(fc.constant(p.prefix)))),
        ([p, prefix]) => {
          fc.pre(prefix !== p.prefix);
          const requested = prefix + p.path + p.query;
          for (const type of CLIENT_TYPES) assert.equal(matchRedirectUri(requested, [uriOf(p)], type), false);
        },
      ),
      params,
    );
  });

  test('native loopback registrations match any port and nothing else', () => {
    const loopback = fc.record({
      host: fc.constantFrom('127.0.0.1', '[::1]'),
      registeredPort: port,
      requestedPort: port,
      path: slashPath,
      query,
      otherPath: slashPath,
    });
    fc.assert(
      fc.property(loopback, (r) => {
        const registered = `http://${r.host}${r.registeredPort}${r.path}${r.query}`;
        const requested = `http://${r.host}${r.requestedPort}${r.path}${r.query}`;
        assert.ok(matchRedirectUri(requested, [registered], 'native'));
        const same = r.registeredPort === r.requestedPort;
        for (const type of ['web', 'spa', 'device', 'service'] as const) {
          assert.equal(matchRedirectUri(requested, [registered], type), same);
        }
        const elsewhere = `http://${r.host}${r.requestedPort}${r.otherPath}${r.query}`;
        assert.equal(matchRedirectUri(elsewhere, [registered], 'native'), r.otherPath === r.path);
        const localhost = registered.replace(r.host, 'localhost');
        const localhostRequested = requested.replace(r.host, 'localhost');
        assert.equal(matchRedirectUri(localhostRequested, [localhost], 'native'), same);
      }),
      params,
    );
  });
});
