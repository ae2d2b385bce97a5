import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseDuration } from './duration.ts';
import {
  configPath,
  envVarName,
  normalizeCidr,
  normalizeOrigin,
  parseListen,
  renderSettingsMarkdown,
  SETTINGS,
} from './settings.ts';

describe('settings table', () => {
  test('case=names are unique and env names follow decision D15', () => {
    assert.equal(new Set(SETTINGS.map((s) => s.name)).size, SETTINGS.length);
    assert.equal(envVarName('database.url'), 'PROUDAUTH_DATABASE_URL');
    assert.equal(envVarName('data_dir'), 'PROUDAUTH_DATA_DIR');
    assert.equal(envVarName('keys.root.1'), 'PROUDAUTH_KEYS_ROOT_1');
  });

  test('case=every default lies within its own range', () => {
    for (const s of SETTINGS) {
      if (s.kind === 'int' && s.default !== null) assert.ok(s.default >= s.min && s.default <= s.max, s.name);
      if (s.kind === 'duration') {
        const d = parseDuration(s.default);
        assert.ok(d >= parseDuration(s.min) && d <= parseDuration(s.max), s.name);
      }
      if (s.kind === 'enum') assert.ok(s.values.includes(s.default), s.name);
    }
  });

  test('case=config paths camelCase and suffix durations with Ms', () => {
    const path = (name: string) => configPath(SETTINGS.find((s) => s.name === name)!).join('.');
    assert.equal(path('security.password.argon_memory_kib'), 'security.password.argonMemoryKib');
    assert.equal(path('keys.kms.timeout'), 'keys.kms.timeoutMs');
    assert.equal(path('data_dir'), 'dataDir');
  });

  test('case=markdown lists every setting with its env var', () => {
    const md = renderSettingsMarkdown();
    assert.match(md, /^\| Setting \| Env var \| Default \| Description \|\n\|---\|---\|---\|---\|\n/);
    assert.equal(md.trim().split('\n').length, SETTINGS.length + 2);
    assert.match(md, /\| `keys\.root\.<n>` \| `PROUDAUTH_KEYS_ROOT_<n>` \| \(none\) \|/);
    assert.match(md, /\| `tokens\.invitation_ttl` \| `PROUDAUTH_TOKENS_INVITATION_TTL` \| 72h \|/);
  });
});

describe('parseListen', () => {
  const ok: [string, string, number][] = [
    ['127.0.0.1:8080', '127.0.0.1', 8080],
    ['[::1]:9090', '::1', 9090],
    ['localhost:0', 'localhost', 0],
    ['0.0.0.0:65535', '0.0.0.0', 65535],
  ];
  for (const [text, host, port] of ok) {
    test(`case=${text}`, () => assert.deepEqual(parseListen(text), { host, port }));
  }
  for (const text of [
    '8080',
    ':8080',
    '::1:80',
    '[nope]:80',
    '1.2.3.4:70000',
    '999.1.1.1:80',
    'a b:80',
    'h:',
  ]) {
    test(`case=${JSON.stringify(text)} is refused`, () =>
      assert.throws(() => parseListen(text), /invalid listen/));
  }
});

describe('normalizeOrigin', () => {
  test('case=accepts origins and drops one trailing slash', () => {
    assert.equal(normalizeOrigin('https://id.example.com/'), 'https://id.example.com');
    assert.equal(normalizeOrigin('http://LOCALHOST:8080'), 'http://localhost:8080');
    assert.equal(normalizeOrigin('https://[::1]:8443'), 'https://[::1]:8443');
  });
  const bad = [
    'ftp://x',
    'https://x/path',
    'https://x?q',
    'https://x#f',
    'https://u@x',
    'https://x//',
    'x.com',
    'https://x:99999',
  ];
  for (const text of bad) {
    test(`case=${text} is refused`, () => assert.throws(() => normalizeOrigin(text), /must be an origin/));
  }
});

describe('normalizeCidr', () => {
  test('case=accepts v4 and v6 blocks and single addresses', () => {
    assert.equal(normalizeCidr('10.0.0.0/8'), '10.0.0.0/8');
    assert.equal(normalizeCidr('fd00::/8'), 'fd00::/8');
    assert.equal(normalizeCidr('192.0.2.1'), '192.0.2.1/32');
    assert.equal(normalizeCidr('::1'), '::1/128');
  });
  for (const text of ['10.0.0.0/33', '::/129', 'foo/8', '10.0.0.0/8/1', '10.0.0.0/x', '']) {
    test(`case=${JSON.stringify(text)} is refused`, () =>
      assert.throws(() => normalizeCidr(text), /invalid CIDR/));
  }
});
