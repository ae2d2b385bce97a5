// The operator settings: one declarative table that drives loading, validation and the generated
// settings reference. Names follow spec doc 1 and doc 2 (Limits tables, Authentication 6, Key
// custody); env var names follow decision D15.

import { isIP, isIPv4, isIPv6 } from 'node:net';

export type Environment = 'development' | 'production';
export type SigningAlgorithm = 'RS256' | 'PS256' | 'ES256' | 'EdDSA';
export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export type LogFormatSetting = 'auto' | 'json' | 'pretty';

export interface Config {
  environment: Environment;
  dataDir: string;
  database: { url: string | null };
  server: {
    publicOrigin: string;
    listen: string;
    internalListen: string;
    drainDelayMs: number;
    /** `proudauth serve` processes sharing the listeners; 0: one per CPU core. */
    processes: number;
    hostPolicy: 'any' | 'strict';
    metricsToken: string | null;
    trustedProxies: string[];
    proxyHeaders: 'auto' | 'forwarded' | 'x-forwarded';
    /** The mutual-TLS listener (docs/oauth-mtls.md); null: none. */
    mtlsListen: string | null;
    mtlsCertFile: string | null;
    mtlsKeyFile: string | null;
    /** Origin clients reach the mutual-TLS listener at (discovery's mtls_endpoint_aliases). */
    mtlsOrigin: string | null;
  };
  limits: {
    maxBodyBytes: number;
    maxHeaderBytes: number;
    maxTokenBytes: number;
    maxInflightRequests: number;
    requestTimeoutMs: number;
    defaultPageSize: number;
    maxPageSize: number;
    invitationResends: number;
    sharedInvitationMaxUses: number;
    sharedInvitationMaxTtlMs: number;
    metadataBytes: number;
  };
  tokens: {
    transactionTtlMs: number;
    idTokenTtlMs: number;
    authorizationCodeTtlMs: number;
    challengeTtlMs: number;
    invitationTtlMs: number;
    deviceCodeTtlMs: number;
    maxAccessTokenTtlMs: number;
    clockSkewMs: number;
    dpopNonceRequired: boolean;
  };
  security: {
    recentAuthWindowMs: number;
    minAuthResponseMs: number;
    challengeProviders: string | null;
    challengeProviderSecret: string | null;
    budgets: {
      accountFailures: number;
      accountWindowMs: number;
      networkAttempts: number;
      networkWindowMs: number;
      organizationAttempts: number;
      organizationWindowMs: number;
      clientTokenRequests: number;
      clientTokenWindowMs: number;
      clientAuthFailures: number;
      clientAuthWindowMs: number;
      networkAuthFailures: number;
      networkAuthWindowMs: number;
      clientInvalidGrants: number;
      clientInvalidGrantWindowMs: number;
    };
    password: {
      argonMemoryKib: number;
      argonIterations: number;
      argonParallelism: number;
      maxConcurrentHashes: number;
    };
  };
  keys: {
    root: Record<string, string>;
    activeVersion: number | null;
    pepper: Record<string, string>;
    pepperActiveVersion: number | null;
    signingAlgorithm: SigningAlgorithm;
    prepublishPeriodMs: number;
    rotationIntervalMs: number;
    retirementPeriodMs: number;
    kms: { command: string | null; timeoutMs: number };
  };
  storage: { statementTimeoutMs: number; maxConns: number };
  observability: {
    metricsEnabled: boolean;
    maxClockSkewMs: number;
    logLevel: LogLevel;
    logFormat: LogFormatSetting;
    tracing: { enabled: boolean; endpoint: string | null; samplingRatio: number; serviceName: string };
  };
  privacy: {
    auditRetentionMs: number;
    auditRetentionByCategory: string | null;
    auditArchiveDir: string | null;
    sessionRetentionMs: number;
    historyRetentionMs: number;
    exportRetentionMs: number;
    deletionGraceMs: number;
    residency: { region: string | null; allowedDestinations: string[] };
  };
  delivery: {
    webhookTimeoutMs: number;
    webhookMaxAttempts: number;
    egressAllowlist: string[];
    allowPrivateWebhooks: boolean;
    smtpHost: string | null;
    smtpPort: number;
    smtpTls: 'starttls' | 'implicit' | 'none';
    smtpUsername: string | null;
    /** A secret reference (env:, file:, cred:) or, outside production, a literal. */
    smtpPassword: string | null;
    mailFrom: string;
    /** Mail written as .eml files to this folder instead of SMTP (proudauth dev). */
    mailDir: string | null;
    payloadRetentionMs: number;
    smsUrl: string | null;
    /** A secret reference to the key that signs SMS requests (HMAC-SHA256). */
    smsSigningKey: string | null;
    /** Print SMS on the terminal instead of sending them (proudauth dev). */
    smsDevSink: boolean;
  };
  workers: { tenantBatchShare: number; maxJobsPerOrganization: number; metricsListen: string | null };
  webauthn: {
    relatedOrigins: boolean;
    metadataBlob: string | null;
    metadataRoot: string | null;
    metadataGracePeriodMs: number;
  };
  authorization: { policyEngines: string | null; policyEngineTimeoutMs: number };
  impersonation: { handoffTtlMs: number };
  ui: { enabled: boolean };
}

interface Base {
  name: string;
  description: string;
}
/** `secret` settings never have their value echoed in an error message. */
export type Setting = Base &
  (
    | { kind: 'string'; default: string | null; nullable?: true; secret?: true }
    | { kind: 'int'; default: number | null; min: number; max: number; nullable?: true }
    // a fraction from 0 to 1 (a sampling ratio)
    | { kind: 'ratio'; default: number }
    | { kind: 'bool'; default: boolean }
    | { kind: 'duration'; default: string; min: string; max: string }
    | { kind: 'enum'; default: string; values: readonly string[] }
    | { kind: 'origin'; default: string }
    | { kind: 'listen'; default: string | null; nullable?: true }
    | { kind: 'cidrs'; default: readonly string[] }
    | { kind: 'hosts'; default: readonly string[] }
    // version number -> secret reference; env vars carry the version as a numeric suffix
    | { kind: 'refs'; default: Readonly<Record<string, string>> }
  );

const KIB = 1024;
const MIB = 1024 * KIB;
const MAX_VERSION = 2 ** 31 - 1;

const int = (name: string, dflt: number, min: number, max: number, description: string): Setting => ({
  name,
  kind: 'int',
  default: dflt,
  min,
  max,
  description,
});
const dur = (name: string, dflt: string, min: string, max: string, description: string): Setting => ({
  name,
  kind: 'duration',
  default: dflt,
  min,
  max,
  description,
});
const bool = (name: string, dflt: boolean, description: string): Setting => ({
  name,
  kind: 'bool',
  default: dflt,
  description,
});

// Ranges are ours (the spec gives defaults only): wide enough for any real deployment, narrow
// enough to catch unit mistakes such as seconds written where kibibytes were meant.
// biome-ignore format: one row per setting reads as a table
export const SETTINGS: readonly Setting[] = [
  { name: 'environment', kind: 'enum', default: 'development', values: ['development', 'production'], description: 'development or production; production enforces https, referenced keys and no private webhooks' },
  { name: 'data_dir', kind: 'string', default: './.proudauth', description: 'Directory for the embedded database and local state' },
  { name: 'database.url', kind: 'string', default: null, nullable: true, secret: true, description: 'PostgreSQL connection URL; unset means the embedded database in data_dir' },

  { name: 'server.public_origin', kind: 'origin', default: 'http://localhost:8080', description: 'Origin (scheme://host[:port]) clients use to reach the server; https in production' },
  { name: 'server.listen', kind: 'listen', default: '127.0.0.1:8080', description: 'Public listener, host:port or [v6]:port' },
  { name: 'server.internal_listen', kind: 'listen', default: '127.0.0.1:9090', description: 'Listener for /metrics and /status' },
  dur('server.drain_delay', '5s', '0', '5m', 'Time /health/ready reports draining before shutdown'),
  int('server.processes', 0, 0, 256, 'Processes `proudauth serve` runs, sharing the listeners; 0: one per CPU core (always one on the embedded database)'),
  { name: 'server.host_policy', kind: 'enum', default: 'any', values: ['any', 'strict'], description: 'strict serves host-bound paths only on the public origin host' },
  { name: 'server.metrics_token', kind: 'string', default: null, nullable: true, secret: true, description: 'Bearer token for /metrics and /status: env:, file:, cred: reference or a literal' },
  { name: 'server.trusted_proxies', kind: 'cidrs', default: [], description: 'Comma-separated CIDRs of reverse proxies: only from these peers are Forwarded and X-Forwarded-For read for the client address' },
  { name: 'server.proxy_headers', kind: 'enum', default: 'auto', values: ['auto', 'forwarded', 'x-forwarded'], description: 'Which header trusted proxies name the client in: forwarded, x-forwarded (X-Forwarded-For), or auto (either; when both come they must agree, else the proxy counts)' },
  { name: 'server.mtls_listen', kind: 'listen', default: null, nullable: true, description: 'Mutual-TLS listener (RFC 8705), host:port; asks for a client certificate without requiring one; unset serves none' },
  { name: 'server.mtls_cert_file', kind: 'string', default: null, nullable: true, description: 'PEM certificate chain of the mutual-TLS listener' },
  { name: 'server.mtls_key_file', kind: 'string', default: null, nullable: true, description: 'PEM private key of the mutual-TLS listener' },
  { name: 'server.mtls_origin', kind: 'string', default: null, nullable: true, description: 'https origin clients reach the mutual-TLS listener at, published as mtls_endpoint_aliases; unset publishes none' },

  int('limits.max_body_bytes', 256 * KIB, KIB, 64 * MIB, 'Largest request body'),
  int('limits.max_header_bytes', 16 * KIB, KIB, MIB, 'Largest request header section'),
  int('limits.max_token_bytes', 8 * KIB, KIB, MIB, 'Largest bearer token accepted'),
  int('limits.max_inflight_requests', 2000, 4, 1_000_000, 'In-flight requests per process before load shedding'),
  dur('limits.request_timeout', '30s', '1s', '10m', 'Request cancellation deadline'),
  int('limits.default_page_size', 50, 1, 1000, 'Page size when a list request gives none'),
  int('limits.max_page_size', 200, 1, 1000, 'Largest page size; larger requests are reduced'),
  int('limits.invitation_resends', 5, 0, 100, 'Resends allowed per invitation'),
  int('limits.shared_invitation_max_uses', 100, 1, 100_000, 'Most uses of a shared invitation link'),
  dur('limits.shared_invitation_max_ttl', '72h', '1m', '30d', 'Longest lifetime of a shared invitation link'),
  int('limits.metadata_bytes', 16 * KIB, 256, MIB, 'Largest metadata object'),

  dur('tokens.transaction_ttl', '10m', '1m', '24h', 'Sign-in transaction lifetime'),
  dur('tokens.id_token_ttl', '5m', '30s', '24h', 'ID token lifetime'),
  dur('tokens.authorization_code_ttl', '60s', '10s', '10m', 'Authorization code lifetime'),
  dur('tokens.challenge_ttl', '10m', '1m', '24h', 'Email and SMS code lifetime'),
  dur('tokens.invitation_ttl', '72h', '1h', '30d', 'Invitation lifetime'),
  dur('tokens.device_code_ttl', '10m', '1m', '1h', 'Device code lifetime'),
  dur('tokens.max_access_token_ttl', '60m', '30s', '24h', 'Cap on access token lifetimes'),
  dur('tokens.clock_skew', '60s', '0', '10m', 'Tolerance for time claims in received tokens'),
  bool('tokens.dpop_nonce_required', false, 'DPoP proofs must carry a server nonce (DPoP-Nonce) at the token endpoint and at this service\'s resources'),

  dur('security.recent_auth_window', '10m', '1m', '24h', 'How recent authentication must be for sensitive actions'),
  dur('security.min_auth_response', '250ms', '0', '5s', 'Password step responses are padded to at least this'),
  { name: 'security.challenge_providers', kind: 'string', default: null, nullable: true, description: 'CAPTCHA-style challenge providers realms may name in authentication_flow.challenge_provider: comma-separated name=url pairs' },
  { name: 'security.challenge_provider_secret', kind: 'string', default: null, nullable: true, secret: true, description: 'Secret sent to the challenge providers with each response: env:, file:, cred: reference or a literal' },
  int('security.budgets.account_failures', 10, 0, 1_000_000, 'Failed sign-in proofs per account per window before 429 (0: off)'),
  dur('security.budgets.account_window', '15m', '1s', '24h', 'Window of security.budgets.account_failures'),
  int('security.budgets.network_attempts', 60, 0, 1_000_000, 'Sign-in proof attempts per client network (/24, /64) per window (0: off)'),
  dur('security.budgets.network_window', '1m', '1s', '24h', 'Window of security.budgets.network_attempts'),
  int('security.budgets.organization_attempts', 600, 0, 10_000_000, 'Sign-in proof attempts per organization per window (0: off)'),
  dur('security.budgets.organization_window', '1m', '1s', '24h', 'Window of security.budgets.organization_attempts'),
  int('security.budgets.client_token_requests', 6000, 0, 100_000_000, 'Token endpoint requests per client per window (0: off)'),
  dur('security.budgets.client_token_window', '1m', '1s', '24h', 'Window of security.budgets.client_token_requests'),
  int('security.budgets.client_auth_failures', 60, 0, 1_000_000, 'Failed client authentications per presented client_id per window at the token, introspection and revocation endpoints; then 429 slow_down before any secret is checked (0: off)'),
  dur('security.budgets.client_auth_window', '1m', '1s', '24h', 'Window of security.budgets.client_auth_failures'),
  int('security.budgets.network_auth_failures', 60, 0, 1_000_000, 'Failed client authentications per client network (/24, /64) per window at those endpoints (0: off)'),
  dur('security.budgets.network_auth_window', '1m', '1s', '24h', 'Window of security.budgets.network_auth_failures'),
  int('security.budgets.client_invalid_grants', 60, 0, 1_000_000, 'invalid_grant answers per client per window at the token endpoint; then 429 slow_down (0: off)'),
  dur('security.budgets.client_invalid_grant_window', '1m', '1s', '24h', 'Window of security.budgets.client_invalid_grants'),
  int('security.password.argon_memory_kib', 64 * KIB, 8 * KIB, 4 * MIB, 'Argon2id memory in KiB'),
  int('security.password.argon_iterations', 2, 1, 100, 'Argon2id iterations'),
  int('security.password.argon_parallelism', 1, 1, 64, 'Argon2id lanes'),
  int('security.password.max_concurrent_hashes', 4, 1, 1024, 'Password hashes computed at once per process'),

  { name: 'keys.root', kind: 'refs', default: {}, description: 'Root key references by version (keys.root.<n>): file:, env:, cred: or kms:' },
  { name: 'keys.active_version', kind: 'int', default: null, nullable: true, min: 1, max: MAX_VERSION, description: 'Root key version that encrypts new data; must be listed in keys.root' },
  { name: 'keys.pepper', kind: 'refs', default: {}, description: 'Optional password pepper references by version (keys.pepper.<n>)' },
  { name: 'keys.pepper_active_version', kind: 'int', default: null, nullable: true, min: 1, max: MAX_VERSION, description: 'Pepper version applied to new password verifiers' },
  { name: 'keys.signing_algorithm', kind: 'enum', default: 'RS256', values: ['RS256', 'PS256', 'ES256', 'EdDSA'], description: 'Algorithm of newly generated signing keys' },
  dur('keys.prepublish_period', '48h', '10m', '30d', 'Time a planned signing key is published before it signs'),
  dur('keys.rotation_interval', '90d', '1d', '730d', 'Age at which signing keys are rotated'),
  dur('keys.retirement_period', '7d', '1h', '365d', 'Time a replaced signing key stays published'),
  { name: 'keys.kms.command', kind: 'string', default: null, nullable: true, description: 'Shell command that unwraps kms: references (file on stdin, KMS_KEY_REF in env)' },
  dur('keys.kms.timeout', '10s', '100ms', '60s', 'Time limit for each keys.kms.command run'),

  dur('storage.statement_timeout', '30s', '1s', '10m', 'PostgreSQL statement timeout'),
  int('storage.max_conns', 20, 1, 1000, 'Database connections per process'),

  bool('observability.metrics_enabled', true, 'Serve /metrics'),
  dur('observability.max_clock_skew', '1s', '0', '10m', 'Clock skew against the database above which readiness degrades'),
  { name: 'observability.log_level', kind: 'enum', default: 'info', values: ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'], description: 'Log level' },
  // OpenTelemetry traces (docs/deployment.md, Tracing): off unless enabled; the endpoint is reached
  // through the same egress rules as webhooks.
  bool('observability.tracing.enabled', false, 'Export OpenTelemetry traces by OTLP/HTTP (JSON); off loads no tracing code at all'),
  { name: 'observability.tracing.endpoint', kind: 'string', default: null, nullable: true, description: 'OTLP/HTTP traces URL of the collector, such as http://collector:4318/v1/traces; reached under delivery.egress_allowlist like any outbound request' },
  { name: 'observability.tracing.sampling_ratio', kind: 'ratio', default: 1, description: 'Share of new traces recorded, 0 to 1; a trusted proxy\'s sampled flag is followed' },
  { name: 'observability.tracing.service_name', kind: 'string', default: 'proudauth', description: 'service.name of the exported spans' },
  { name: 'observability.log_format', kind: 'enum', default: 'auto', values: ['auto', 'json', 'pretty'], description: 'Log lines as JSON or human text; auto is human text for proudauth dev on a terminal, JSON otherwise' },

  dur('privacy.audit_retention', '400d', '1d', '3650d', 'Audit event retention'),
  { name: 'privacy.audit_retention_by_category', kind: 'string', default: null, nullable: true, description: 'Audit retention per category, comma-separated category=duration pairs (e.g. security=730d); others use privacy.audit_retention' },
  { name: 'privacy.audit_archive_dir', kind: 'string', default: null, nullable: true, description: 'Directory of the write-once audit archive (one NDJSON file per sealed batch); when set, only archived batches are pruned' },
  dur('privacy.session_retention', '30d', '1d', '3650d', 'Retention of ended sessions, grants and tokens'),
  dur('privacy.history_retention', '180d', '1d', '3650d', 'Retention of delivery and invitation history'),
  dur('privacy.export_retention', '24h', '1h', '30d', 'Retention of encrypted job results'),
  dur('privacy.deletion_grace', '30d', '0', '365d', 'Time a self-service deletion request waits (cancellable at sign-in) before the account is erased'),
  { name: 'privacy.residency.region', kind: 'string', default: null, nullable: true, description: 'The region this deployment keeps data in, shown by /status' },
  { name: 'privacy.residency.allowed_destinations', kind: 'hosts', default: [], description: 'Comma-separated hosts (or *.domain) outbound deliveries may reach; empty: any host the egress guard allows' },

  dur('delivery.webhook_timeout', '10s', '1s', '60s', 'Timeout of one webhook attempt'),
  int('delivery.webhook_max_attempts', 12, 1, 100, 'Attempts before a delivery is dead-lettered'),
  { name: 'delivery.egress_allowlist', kind: 'cidrs', default: [], description: 'Comma-separated CIDRs webhooks may reach even when private' },
  bool('delivery.allow_private_webhooks', false, 'Allow webhooks to private addresses (refused in production)'),
  { name: 'delivery.smtp_host', kind: 'string', default: null, nullable: true, description: 'SMTP server host name; unset sends no mail (proudauth dev writes mail to a folder instead)' },
  int('delivery.smtp_port', 587, 1, 65535, 'SMTP server port'),
  { name: 'delivery.smtp_tls', kind: 'enum', default: 'starttls', values: ['starttls', 'implicit', 'none'], description: 'starttls (required upgrade), implicit (TLS from the first byte, usually port 465) or none (local relays only)' },
  { name: 'delivery.smtp_username', kind: 'string', default: null, nullable: true, description: 'SMTP user name; unset sends without authentication' },
  { name: 'delivery.smtp_password', kind: 'string', default: null, nullable: true, secret: true, description: 'SMTP password: env:, file: or cred: reference (a literal only outside production)' },
  { name: 'delivery.mail_from', kind: 'string', default: 'ProudAuth <no-reply@localhost>', description: 'From address of mail the service sends' },
  { name: 'delivery.mail_dir', kind: 'string', default: null, nullable: true, description: 'Write mail as .eml files to this folder instead of sending it (proudauth dev uses <data_dir>/mail)' },
  dur('delivery.payload_retention', '7d', '1h', '365d', 'Time after which a notification keeps no recipient or message text'),
  { name: 'delivery.sms_url', kind: 'string', default: null, nullable: true, description: 'https URL the SMS adapter POSTs signed JSON to; unset offers no SMS codes' },
  bool('delivery.sms_dev_sink', false, 'Print SMS messages and their codes on the terminal instead of sending them (proudauth dev turns it on when delivery.sms_url is unset)'),
  { name: 'delivery.sms_signing_key', kind: 'string', default: null, nullable: true, secret: true, description: 'Key that signs SMS requests (HMAC-SHA256): env:, file: or cred: reference' },

  int('workers.tenant_batch_share', 25, 1, 100_000, 'Notification batch share per organization'),
  int('workers.max_jobs_per_organization', 2, 1, 1000, 'Concurrent jobs per organization'),
  { name: 'workers.metrics_listen', kind: 'listen', default: null, nullable: true, description: 'Worker listener for internal paths; unset serves none' },

  bool('webauthn.related_origins', false, 'Allow realms to publish related origins for passkeys'),
  { name: 'webauthn.metadata_blob', kind: 'string', default: null, nullable: true, description: 'File holding a FIDO MDS3 metadata BLOB (a JWT); re-read when it changes. Needs webauthn.metadata_root' },
  { name: 'webauthn.metadata_root', kind: 'string', default: null, nullable: true, description: 'PEM file of the root certificate the metadata BLOB must chain to' },
  dur('webauthn.metadata_grace_period', '7d', '0', '365d', 'How long past its nextUpdate date the metadata BLOB is still used (with a warning); after that it no longer makes any attestation trusted'),

  { name: 'authorization.policy_engines', kind: 'string', default: null, nullable: true, description: 'External policy engines realms may name in policy_engine: comma-separated name=url pairs, each an Open Policy Agent data API URL' },
  dur('authorization.policy_engine_timeout', '500ms', '10ms', '30s', 'Time limit of one policy engine request'),

  // doc 2, Default lifetimes: a support handoff code lives at most 30 s.
  dur('impersonation.handoff_ttl', '30s', '1s', '30s', 'Lifetime of a support handoff code (single use)'),

  // `proudauth dev` serves the built-in UI whatever this says (docs/login-ui.md).
  bool('ui.enabled', false, 'Serve the built-in login UI and account page under /ui/ on the public listener (always on in proudauth dev)'),
];

/** `database.url` -> `PROUDAUTH_DATABASE_URL` (decision D15). */
export function envVarName(name: string): string {
  return `PROUDAUTH_${name.replace(/\./g, '_').toUpperCase()}`;
}

/** Where a setting lives in Config: camelCased segments, durations suffixed with Ms. */
export function configPath(s: Setting): string[] {
  const segs = s.name.split('.').map((seg) => seg.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase()));
  if (s.kind === 'duration') segs[segs.length - 1] += 'Ms';
  return segs;
}

function renderDefault(s: Setting): string {
  if (s.default === null) return '(unset)';
  if (s.kind === 'cidrs' || s.kind === 'hosts') return s.default.length ? s.default.join(',') : '(empty)';
  if (s.kind === 'refs') return '(none)';
  return String(s.default);
}

/** Markdown reference of every setting, generated so the docs cannot drift from the table. */
export function renderSettingsMarkdown(): string {
  const cell = (t: string) => t.replace(/\|/g, '\\|');
  const rows = SETTINGS.map((s) => {
    const name = s.kind === 'refs' ? `${s.name}.<n>` : s.name;
    const env = s.kind === 'refs' ? `${envVarName(s.name)}_<n>` : envVarName(s.name);
    return `| \`${name}\` | \`${env}\` | ${cell(renderDefault(s))} | ${cell(s.description)} |`;
  });
  return ['| Setting | Env var | Default | Description |', '|---|---|---|---|', ...rows].join('\n') + '\n';
}

const HOSTNAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

/** Parses `host:port` or `[v6]:port`; the returned host has no brackets. Port 0 asks for any free port. */
export function parseListen(s: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(s);
  const bad = (why: string) => new Error(`invalid listen address ${JSON.stringify(s)}: ${why}`);
  if (!m) throw bad('expected host:port or [v6]:port');
  const port = Number(m[3]);
  if (port > 65535) throw bad('port must be 0..65535');
  if (m[1] !== undefined) {
    if (!isIPv6(m[1])) throw bad('brackets must hold an IPv6 address');
    return { host: m[1], port };
  }
  const host = m[2]!;
  // All-numeric names are never hostnames; treat them as a mistyped IPv4 address.
  if (!isIPv4(host) && (/^[\d.]+$/.test(host) || !HOSTNAME.test(host))) throw bad('invalid host');
  return { host, port };
}

/** Checks an Origin (scheme://host[:port]) and returns its canonical form without trailing slash. */
export function normalizeOrigin(s: string): string {
  // Checked on the raw text because URL() would silently accept and drop some of these parts.
  if (!/^https?:\/\/[^/?#@\\\s]+\/?$/i.test(s)) {
    throw new Error('must be an origin: http(s)://host[:port] without path, query, fragment or userinfo');
  }
  try {
    return new URL(s).origin;
  } catch {
    throw new Error('must be an origin: invalid host or port');
  }
}

/** Checks a CIDR; a bare address is taken as a single-host block. */
export function normalizeCidr(s: string): string {
  const [addr = '', prefix, ...extra] = s.trim().split('/');
  const family = isIP(addr);
  const bits = family === 4 ? 32 : 128;
  if (
    !family ||
    extra.length ||
    (prefix !== undefined && (!/^\d{1,3}$/.test(prefix) || Number(prefix) > bits))
  ) {
    throw new Error(`invalid CIDR ${JSON.stringify(s)}`);
  }
  return `${addr}/${prefix === undefined ? bits : Number(prefix)}`;
}
