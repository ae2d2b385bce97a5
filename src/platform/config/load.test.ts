import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ConfigError, loadConfig } from './load.ts';
import type { Config } from './settings.ts';

const dir = mkdtempSync(join(tmpdir(), 'proudauth-config-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
function writeConfig(ext: string, text: string): string {
  const file = join(dir, `config-${n++}${ext}`);
  writeFileSync(file, text);
  return file;
}

function problemsOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return err.message;
  }
  assert.fail('expected a ConfigError');
}

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const DEFAULTS: Config = {
  environment: 'development',
  dataDir: './.proudauth',
  database: { url: null },
  server: {
    publicOrigin: 'http://localhost:8080',
    listen: '127.0.0.1:8080',
    internalListen: '127.0.0.1:9090',
    drainDelayMs: 5000,
    processes: 0,
    hostPolicy: 'any',
    metricsToken: null,
    trustedProxies: [],
    proxyHeaders: 'auto',
    mtlsListen: null,
    mtlsCertFile: null,
    mtlsKeyFile: null,
    mtlsOrigin: null,
  },
  limits: {
    maxBodyBytes: 262144,
    maxHeaderBytes: 16384,
    maxTokenBytes: 8192,
    maxInflightRequests: 2000,
    requestTimeoutMs: 30_000,
    defaultPageSize: 50,
    maxPageSize: 200,
    invitationResends: 5,
    sharedInvitationMaxUses: 100,
    sharedInvitationMaxTtlMs: 72 * HOUR,
    metadataBytes: 16384,
  },
  tokens: {
    transactionTtlMs: 10 * MIN,
    idTokenTtlMs: 5 * MIN,
    authorizationCodeTtlMs: 60_000,
    challengeTtlMs: 10 * MIN,
    invitationTtlMs: 72 * HOUR,
    deviceCodeTtlMs: 10 * MIN,
    maxAccessTokenTtlMs: 60 * MIN,
    clockSkewMs: 60_000,
    dpopNonceRequired: false,
  },
  security: {
    recentAuthWindowMs: 10 * MIN,
    minAuthResponseMs: 250,
    challengeProviders: null,
    challengeProviderSecret: null,
    budgets: {
      accountFailures: 10,
      accountWindowMs: 15 * MIN,
      networkAttempts: 60,
      networkWindowMs: MIN,
      organizationAttempts: 600,
      organizationWindowMs: MIN,
      clientTokenRequests: 6000,
      clientTokenWindowMs: MIN,
      clientAuthFailures: 60,
      clientAuthWindowMs: MIN,
      networkAuthFailures: 60,
      networkAuthWindowMs: MIN,
      clientInvalidGrants: 60,
      clientInvalidGrantWindowMs: MIN,
    },
    password: { argonMemoryKib: 65536, argonIterations: 2, argonParallelism: 1, maxConcurrentHashes: 4 },
  },
  keys: {
    root: {},
    activeVersion: null,
    pepper: {},
    pepperActiveVersion: null,
    signingAlgorithm: 'RS256',
    prepublishPeriodMs: 48 * HOUR,
    rotationIntervalMs: 90 * DAY,
    retirementPeriodMs: 7 * DAY,
    kms: { command: null, timeoutMs: 10_000 },
  },
  storage: { statementTimeoutMs: 30_000, maxConns: 20 },
  observability: {
    metricsEnabled: true,
    maxClockSkewMs: 1000,
    logLevel: 'info',
    logFormat: 'auto',
    tracing: { enabled: false, endpoint: null, samplingRatio: 1, serviceName: 'proudauth' },
  },
  privacy: {
    auditRetentionMs: 400 * DAY,
    auditRetentionByCategory: null,
    auditArchiveDir: null,
    sessionRetentionMs: 30 * DAY,
    historyRetentionMs: 180 * DAY,
    exportRetentionMs: 24 * HOUR,
    deletionGraceMs: 30 * DAY,
    residency: { region: null, allowedDestinations: [] },
  },
  delivery: {
    webhookTimeoutMs: 10_000,
    webhookMaxAttempts: 12,
    egressAllowlist: [],
    allowPrivateWebhooks: false,
    smtpHost: null,
    smtpPort: 587,
    smtpTls: 'starttls',
    smtpUsername: null,
    smtpPassword: null,
    mailFrom: 'ProudAuth <no-reply@localhost>',
    mailDir: null,
    payloadRetentionMs: 7 * DAY,
    smsUrl: null,
    smsSigningKey: null,
    smsDevSink: false,
  },
  workers: { tenantBatchShare: 25, maxJobsPerOrganization: 2, metricsListen: null },
  webauthn: {
    relatedOrigins: false,
    metadataBlob: null,
    metadataRoot: null,
    metadataGracePeriodMs: 7 * 86_400_000,
  },
  authorization: { policyEngines: null, policyEngineTimeoutMs: 500 },
  impersonation: { handoffTtlMs: 30_000 },
  ui: { enabled: false },
};

describe('loadConfig › defaults', () => {
  test('case=no file and no env gives the documented defaults', () => {
    assert.deepEqual(loadConfig({ env: {} }), DEFAULTS);
  });

  test('case=unrelated PROUDAUTH_ variables are ignored', () => {
    const env = { PROUDAUTH_TEST_DATABASE_URL: 'postgres://x', PROUDAUTH_KEYS_ROOT_X: 'y', HOME: '/root' };
    assert.deepEqual(loadConfig({ env }), DEFAULTS);
  });
});

describe('loadConfig › sources and precedence', () => {
  const yaml = `
environment: development
server:
  public_origin: https://id.example.com/
  listen: "[::1]:8443"
  trusted_proxies: [10.0.0.0/8, 192.0.2.7]
limits:
  max_body_bytes: 100000
tokens:
  transaction_ttl: 15m
keys:
  root:
    1: file:/etc/proudauth/root-1
    2: env:ROOT_2
  active_version: 1
  kms:
    timeout: 30s
`;

  test('case=YAML file values land in Config', () => {
    const c = loadConfig({ file: writeConfig('.yaml', yaml), env: {} });
    assert.equal(c.server.publicOrigin, 'https://id.example.com');
    assert.equal(c.server.listen, '[::1]:8443');
    assert.deepEqual(c.server.trustedProxies, ['10.0.0.0/8', '192.0.2.7/32']);
    assert.equal(c.limits.maxBodyBytes, 100000);
    assert.equal(c.tokens.transactionTtlMs, 15 * MIN);
    assert.deepEqual(c.keys.root, { 1: 'file:/etc/proudauth/root-1', 2: 'env:ROOT_2' });
    assert.equal(c.keys.activeVersion, 1);
    assert.equal(c.keys.kms.timeoutMs, 30_000);
  });

  test('case=JSON file values land in Config', () => {
    const json = JSON.stringify({ storage: { max_conns: 7 }, observability: { log_level: 'debug' } });
    const c = loadConfig({ file: writeConfig('.json', json), env: {} });
    assert.equal(c.storage.maxConns, 7);
    assert.equal(c.observability.logLevel, 'debug');
  });

  test('case=env wins over file and overrides win over env', () => {
    const file = writeConfig('.yaml', yaml);
    const env = {
      PROUDAUTH_LIMITS_MAX_BODY_BYTES: '200000',
      PROUDAUTH_TOKENS_TRANSACTION_TTL: '20m',
      PROUDAUTH_KEYS_ROOT_2: 'cred:root-2',
      PROUDAUTH_KEYS_ROOT_3: 'kms:/etc/proudauth/root-3.wrapped',
      PROUDAUTH_KEYS_ACTIVE_VERSION: '3',
      PROUDAUTH_SERVER_TRUSTED_PROXIES: ' 10.1.0.0/16 , fd00::/8 ',
      PROUDAUTH_OBSERVABILITY_METRICS_ENABLED: 'false',
    };
    const c = loadConfig({
      file,
      env,
      overrides: { 'tokens.transaction_ttl': '30m', 'keys.root.4': 'env:R4' },
    });
    assert.equal(c.limits.maxBodyBytes, 200000);
    assert.equal(c.tokens.transactionTtlMs, 30 * MIN);
    assert.deepEqual(c.keys.root, {
      1: 'file:/etc/proudauth/root-1',
      2: 'cred:root-2',
      3: 'kms:/etc/proudauth/root-3.wrapped',
      4: 'env:R4',
    });
    assert.equal(c.keys.activeVersion, 3);
    assert.deepEqual(c.server.trustedProxies, ['10.1.0.0/16', 'fd00::/8']);
    assert.equal(c.observability.metricsEnabled, false);
  });

  test('case=PROUDAUTH_CONFIG names the file when none is given; null means no file', () => {
    const file = writeConfig('.yml', 'data_dir: /var/lib/proudauth\n');
    assert.equal(loadConfig({ env: { PROUDAUTH_CONFIG: file } }).dataDir, '/var/lib/proudauth');
    assert.equal(loadConfig({ file: null, env: { PROUDAUTH_CONFIG: file } }).dataDir, './.proudauth');
  });

  test('case=overrides accept native values and milliseconds for durations', () => {
    const c = loadConfig({
      env: {},
      overrides: { 'security.min_auth_response': 0, 'server.listen': '127.0.0.1:0' },
    });
    assert.equal(c.security.minAuthResponseMs, 0);
    assert.equal(c.server.listen, '127.0.0.1:0');
    assert.match(
      problemsOf(() => loadConfig({ env: {}, overrides: { 'server.nope': 1 } })),
      /server\.nope \(override\): unknown setting/,
    );
  });

  test('case=empty env value clears a nullable setting', () => {
    const file = writeConfig('.yaml', 'database:\n  url: postgres://db/proudauth\n');
    assert.equal(loadConfig({ file, env: { PROUDAUTH_DATABASE_URL: '' } }).database.url, null);
  });
});

describe('loadConfig › file problems', () => {
  test('case=unknown setting is named with the file', () => {
    const file = writeConfig('.yaml', 'server:\n  public_orgin: https://x\nbogus: 1\n');
    const msg = problemsOf(() => loadConfig({ file, env: {} }));
    assert.match(
      msg,
      new RegExp(`server\\.public_orgin \\(file ${file}, line 2, column 3\\): unknown setting`),
    );
    assert.match(msg, /bogus \(file .*\): unknown setting/);
  });

  test('case=wrong types, ranges and durations are collected together', () => {
    const file = writeConfig(
      '.yaml',
      'limits:\n  max_body_bytes: "1000"\n  max_inflight_requests: 2\n  max_page_size: 5000\ntokens:\n  id_token_ttl: 5 minutes\n  clock_skew: 60\n',
    );
    const msg = problemsOf(() => loadConfig({ file, env: {} }));
    assert.match(msg, /limits\.max_body_bytes \(file .*\): must be an integer/);
    assert.match(msg, /limits\.max_inflight_requests \(file .*\): must be between 4 and/);
    assert.match(msg, /limits\.max_page_size \(file .*\): must be between 1 and 1000/);
    assert.match(msg, /tokens\.id_token_ttl \(file .*\): invalid duration "5 minutes"/);
    assert.match(msg, /tokens\.clock_skew \(file .*\): must be a duration such as 10m/);
  });

  test('case=a YAML syntax error gives the file, line and column', () => {
    const file = writeConfig('.yaml', 'server:\n  listen: "127.0.0.1:1\nlimits: [\n');
    const msg = problemsOf(() => loadConfig({ file, env: {} }));
    assert.match(msg, new RegExp(`config file ${file}: invalid YAML: .* at line \\d+, column \\d+`));
  });

  test('case=an unknown key gives the file, line and column of the key', () => {
    const file = writeConfig('.yaml', '# comment\ndata_dir: /x\nlimits:\n    max_page_sise: 10\n');
    const msg = problemsOf(() => loadConfig({ file, env: {} }));
    assert.ok(msg.includes(`limits.max_page_sise (file ${file}, line 4, column 5): unknown setting`), msg);
  });

  test('case=a value of the wrong type gives the file, line and column', () => {
    const file = writeConfig(
      '.yaml',
      'server:\n  listen: 127.0.0.1:9000\nlimits:\n  max_body_bytes: "1000"\n',
    );
    const msg = problemsOf(() => loadConfig({ file, env: {} }));
    assert.ok(
      msg.includes(`limits.max_body_bytes (file ${file}, line 4, column 3): must be an integer`),
      msg,
    );
  });

  test('case=an out-of-range value gives the file, line and column (JSON too)', () => {
    const y = writeConfig('.yaml', 'limits:\n  max_page_size: 5000\n');
    const msg = problemsOf(() => loadConfig({ file: y, env: {} }));
    assert.ok(
      msg.includes(`limits.max_page_size (file ${y}, line 2, column 3): must be between 1 and 1000`),
      msg,
    );
    const j = writeConfig('.json', '{\n  "limits": {\n    "max_page_size": 0\n  }\n}\n');
    const jmsg = problemsOf(() => loadConfig({ file: j, env: {} }));
    assert.ok(
      jmsg.includes(`limits.max_page_size (file ${j}, line 3, column 5): must be between 1 and 1000`),
      jmsg,
    );
  });

  test('case=a bad key version in a file points at the version key', () => {
    const file = writeConfig('.yaml', 'keys:\n  root:\n    "01": env:X\n');
    const msg = problemsOf(() => loadConfig({ file, env: {} }));
    assert.ok(msg.includes(`keys.root.01 (file ${file}, line 3, column 5): version must be`), msg);
  });

  test('case=duplicate keys are refused in YAML and JSON', () => {
    const y = writeConfig('.yaml', 'data_dir: a\ndata_dir: b\n');
    assert.match(
      problemsOf(() => loadConfig({ file: y, env: {} })),
      /config file .*: invalid YAML: .*[Dd]uplicate/,
    );
    const j = writeConfig('.json', '{"server": {"listen": "127.0.0.1:1", "listen": "127.0.0.1:2"}}');
    assert.match(
      problemsOf(() => loadConfig({ file: j, env: {} })),
      /config file .*: invalid JSON: .*[Dd]uplicate/,
    );
  });

  test('case=JSON is parsed strictly', () => {
    const j = writeConfig('.json', '{ data_dir: "x" }');
    assert.match(
      problemsOf(() => loadConfig({ file: j, env: {} })),
      /invalid JSON/,
    );
  });

  test('case=missing file and unknown extension are reported', () => {
    assert.match(
      problemsOf(() => loadConfig({ file: join(dir, 'nope.yaml'), env: {} })),
      /cannot read \(ENOENT\)/,
    );
    assert.match(
      problemsOf(() => loadConfig({ file: join(dir, 'x.toml'), env: {} })),
      /unsupported extension/,
    );
  });

  test('case=invalid listen, CIDR, origin and key versions name their settings', () => {
    const file = writeConfig(
      '.yaml',
      'server:\n  listen: "::1:80"\n  trusted_proxies: [300.0.0.0/8]\n  public_origin: https://x/path\nkeys:\n  root:\n    "01": env:A\n    2: ""\n',
    );
    const msg = problemsOf(() => loadConfig({ file, env: {} }));
    assert.match(msg, /server\.listen \(file .*\): invalid listen address/);
    assert.match(msg, /server\.trusted_proxies \(file .*\): invalid CIDR "300\.0\.0\.0\/8"/);
    assert.match(msg, /server\.public_origin \(file .*\): must be an origin/);
    assert.match(msg, /keys\.root\.01 \(file .*\): version must be a positive integer/);
    assert.match(msg, /keys\.root\.2 \(file .*\): must be a non-empty reference string/);
  });
});

describe('loadConfig › env coercion', () => {
  const cases: [string, string, RegExp][] = [
    [
      'PROUDAUTH_STORAGE_MAX_CONNS',
      'many',
      /storage\.max_conns \(env PROUDAUTH_STORAGE_MAX_CONNS\): must be an integer/,
    ],
    [
      'PROUDAUTH_WEBAUTHN_RELATED_ORIGINS',
      'yes',
      /webauthn\.related_origins \(env PROUDAUTH_WEBAUTHN_RELATED_ORIGINS\): must be true or false/,
    ],
    [
      'PROUDAUTH_SERVER_DRAIN_DELAY',
      '5',
      /server\.drain_delay \(env PROUDAUTH_SERVER_DRAIN_DELAY\): invalid duration/,
    ],
    [
      'PROUDAUTH_DELIVERY_EGRESS_ALLOWLIST',
      '10.0.0.0/8,nope',
      /delivery\.egress_allowlist \(env PROUDAUTH_DELIVERY_EGRESS_ALLOWLIST\): invalid CIDR/,
    ],
    [
      'PROUDAUTH_ENVIRONMENT',
      'staging',
      /environment \(env PROUDAUTH_ENVIRONMENT\): must be one of development, production/,
    ],
    ['PROUDAUTH_DATA_DIR', '', /data_dir \(env PROUDAUTH_DATA_DIR\): must be set/],
    [
      'PROUDAUTH_KEYS_ROOT_0',
      'env:X',
      /keys\.root\.0 \(env PROUDAUTH_KEYS_ROOT_0\): version must be a positive integer/,
    ],
  ];
  for (const [name, value, expected] of cases) {
    test(`case=${name}=${JSON.stringify(value)}`, () => {
      assert.match(
        problemsOf(() => loadConfig({ env: { [name]: value } })),
        expected,
      );
    });
  }

  test('case=secret settings never echo their value', () => {
    const msg = problemsOf(() => loadConfig({ env: {}, overrides: { 'database.url': 12345678 } }));
    assert.match(msg, /database\.url \(override\): must be a string/);
    assert.doesNotMatch(msg, /12345678/);
  });
});

describe('loadConfig › cross-setting rules', () => {
  test('case=active versions must name a listed version', () => {
    const env = { PROUDAUTH_KEYS_ROOT_1: 'env:A', PROUDAUTH_KEYS_PEPPER_ACTIVE_VERSION: '2' };
    const msg = problemsOf(() => loadConfig({ env }));
    assert.match(
      msg,
      /keys\.active_version \(default\): must name a version listed in keys\.root \(listed: 1\)/,
    );
    assert.match(
      msg,
      /keys\.pepper_active_version \(env PROUDAUTH_KEYS_PEPPER_ACTIVE_VERSION\): must name a version listed in keys\.pepper \(listed: none\)/,
    );
  });

  test('case=default page size must not exceed the maximum', () => {
    const env = { PROUDAUTH_LIMITS_DEFAULT_PAGE_SIZE: '300' };
    assert.match(
      problemsOf(() => loadConfig({ env })),
      /limits\.default_page_size \(env .*\): must not exceed/,
    );
  });
});

describe('loadConfig › production rules', () => {
  const prod = {
    PROUDAUTH_ENVIRONMENT: 'production',
    PROUDAUTH_SERVER_PUBLIC_ORIGIN: 'https://id.example.com',
  };

  test('case=a valid production configuration loads', () => {
    assert.equal(loadConfig({ env: prod }).environment, 'production');
  });

  test('case=public origin must be https', () => {
    const env = { ...prod, PROUDAUTH_SERVER_PUBLIC_ORIGIN: 'http://id.example.com' };
    assert.match(
      problemsOf(() => loadConfig({ env })),
      /server\.public_origin \(env PROUDAUTH_SERVER_PUBLIC_ORIGIN\): must be https in production/,
    );
    assert.match(
      problemsOf(() => loadConfig({ env: { PROUDAUTH_ENVIRONMENT: 'production' } })),
      /\(default\): must be https/,
    );
  });

  test('case=private webhooks are refused', () => {
    const env = { ...prod, PROUDAUTH_DELIVERY_ALLOW_PRIVATE_WEBHOOKS: 'true' };
    assert.match(
      problemsOf(() => loadConfig({ env })),
      /delivery\.allow_private_webhooks \(env .*\): is refused in production/,
    );
    assert.equal(
      loadConfig({ env: { PROUDAUTH_DELIVERY_ALLOW_PRIVATE_WEBHOOKS: 'true' } }).delivery
        .allowPrivateWebhooks,
      true,
    );
  });

  test('case=kms timeout is at most one minute', () => {
    const env = { ...prod, PROUDAUTH_KEYS_KMS_TIMEOUT: '61s' };
    assert.match(
      problemsOf(() => loadConfig({ env })),
      /keys\.kms\.timeout \(env .*\): must be between 100ms and 1m/,
    );
    assert.equal(
      loadConfig({ env: { ...prod, PROUDAUTH_KEYS_KMS_TIMEOUT: '60s' } }).keys.kms.timeoutMs,
      60_000,
    );
  });
});

test('privacy.residency.allowed_destinations: host names and *.domain patterns, normalized; others refused', () => {
  const c = loadConfig({
    env: { PROUDAUTH_PRIVACY_RESIDENCY_ALLOWED_DESTINATIONS: 'Hooks.EU.example.com, *.eu.example.net' },
  });
  assert.deepEqual(c.privacy.residency.allowedDestinations, ['hooks.eu.example.com', '*.eu.example.net']);
  assert.throws(
    () => loadConfig({ env: { PROUDAUTH_PRIVACY_RESIDENCY_ALLOWED_DESTINATIONS: 'https://x.example/' } }),
    /privacy\.residency\.allowed_destinations.*not a host name/s,
  );
});
