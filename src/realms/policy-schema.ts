// The shape of a realm policy (spec doc 1, Policy; Passkey policy; Limits), as data: every section
// and member with its type, range or values. Members the spec names without a shape get the shape
// docs/policy.md gives them. policy-check.ts walks this table; nothing else interprets it.

export type PolicyNode =
  | { t: 'bool' }
  | { t: 'int'; min: number; max: number }
  | { t: 'enum'; values: readonly string[] }
  | { t: 'str'; min: number; max: number; check?: (s: string) => string | null }
  | { t: 'list'; item: PolicyNode; max: number; min?: number; unique?: boolean }
  | { t: 'obj'; members: Record<string, PolicyNode>; required?: readonly string[] };

const bool: PolicyNode = { t: 'bool' };
const int = (min: number, max: number): PolicyNode => ({ t: 'int', min, max });
const oneOf = (...values: string[]): PolicyNode => ({ t: 'enum', values });
const str = (max: number, check?: (s: string) => string | null, min = 1): PolicyNode =>
  check ? { t: 'str', min, max, check } : { t: 'str', min, max };
const list = (item: PolicyNode, max: number, min = 0): PolicyNode => ({
  t: 'list',
  item,
  max,
  min,
  unique: true,
});
const obj = (members: Record<string, PolicyNode>, required?: readonly string[]): PolicyNode =>
  required ? { t: 'obj', members, required } : { t: 'obj', members };

// ---- value checks (null when fine, else why not) ---------------------------------------------

const DNS_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** A lower-case DNS name of two or more labels whose last label is not numeric. */
export function domainProblem(value: string): string | null {
  const labels = value.split('.');
  const ok =
    value.length <= 253 &&
    labels.length >= 2 &&
    labels.every((l) => DNS_LABEL.test(l)) &&
    !/^[0-9]+$/.test(labels.at(-1) ?? '');
  return ok ? null : 'a lower-case DNS name';
}

/** An rp_id: a domain name as above, or localhost (browsers accept it for development). */
const rpIdProblem = (v: string): string | null => (v === 'localhost' ? null : domainProblem(v));

/** Spec doc 1, Value formats: Origin. The canonical form a browser sends, optional trailing slash. */
export function originProblem(raw: string, httpsOnly = false): string | null {
  const detail = httpsOnly ? 'an https origin (scheme://host[:port])' : 'an origin (scheme://host[:port])';
  if (raw.includes('*') || raw.includes('\\') || /\s/.test(raw)) return detail;
  const value = raw.endsWith('/') ? raw.slice(0, -1) : raw;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return detail;
  }
  if (url.protocol !== 'https:' && (httpsOnly || url.protocol !== 'http:')) return detail;
  return url.origin === value ? null : detail;
}

/** An absolute http(s) URL without userinfo or fragment (the login UI's address). */
function urlProblem(raw: string): string | null {
  const detail = 'an absolute http or https URL without userinfo or fragment';
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return detail;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return detail;
  if (url.username || url.password || url.hash || raw.includes('#') || /\s/.test(raw)) return detail;
  return null;
}

const AAGUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const aaguidProblem = (v: string): string | null =>
  AAGUID.test(v) ? null : 'a lower-case AAGUID (UUID form)';

const NAME = /^[a-z][a-z0-9_]{0,63}$/;
const nameProblem = (v: string): string | null =>
  NAME.test(v) ? null : 'a lower-case name: a letter, then letters, digits or _';

const ENGINE_NAME = /^[A-Za-z0-9_.-]*$/;
const engineNameProblem = (v: string): string | null =>
  ENGINE_NAME.test(v) ? null : 'letters, digits, _ . - (empty for no engine)';

/** IPv4 or IPv6 network in CIDR notation. */
function cidrProblem(v: string): string | null {
  const detail = 'an IPv4 or IPv6 network in CIDR notation';
  const m = /^([0-9a-fA-F:.]+)\/(\d{1,3})$/.exec(v);
  if (!m) return detail;
  const [addr = '', bits = ''] = [m[1], m[2]];
  const v4 = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(addr);
  if (v4) return v4.slice(1).every((o) => Number(o) <= 255) && Number(bits) <= 32 ? null : detail;
  if (!addr.includes(':')) return detail;
  try {
    new URL(`http://[${addr}]/`);
  } catch {
    return detail;
  }
  return Number(bits) <= 128 ? null : detail;
}

const plain = (v: string): string | null => (/\p{Cc}/u.test(v) ? 'no control characters' : null);

// Branding (docs/policy.md, "interaction"): a colour the login UI puts in a CSS custom property,
// and a support contact shown as a link, so only forms that cannot carry markup or script.
const colourProblem = (v: string): string | null =>
  /^#[0-9a-fA-F]{6}$/.test(v) ? null : 'a colour written #rrggbb';

const EMAIL = /^[^\s@<>()"',;:]+@[a-z0-9](?:[a-z0-9-]*[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]*[a-z0-9])?)+$/i;

/** An email address or an https URL (no userinfo, no fragment). */
function supportContactProblem(v: string): string | null {
  if (!v.includes('://')) return EMAIL.test(v) ? null : 'an email address or an https URL';
  return v.startsWith('https://') && urlProblem(v) === null ? null : 'an email address or an https URL';
}

// ---- the sections ------------------------------------------------------------------------------

/** Standard OpenID Connect profile claims a realm may require without declaring them. */
export const STANDARD_PROFILE_ATTRIBUTES = [
  'name',
  'given_name',
  'family_name',
  'middle_name',
  'nickname',
  'preferred_username',
  'picture',
  'website',
  'gender',
  'birthdate',
  'zoneinfo',
  'locale',
] as const;

export const SIGN_IN_METHODS = [
  'password',
  'email_otp',
  'magic_link',
  'sms_otp',
  'passkeys',
  'certificates',
] as const;

export const AUTHENTICATION_FLOW_OUTCOMES = [
  'allow',
  'deny',
  'require_mfa',
  'require_phishing_resistant',
  'challenge',
  'review',
] as const;

export const POLICY_SCHEMA: Record<string, PolicyNode> = {
  registration: obj({
    mode: oneOf('closed', 'open', 'domain_restricted'),
    require_email_verification: bool,
    allowed_domains: list(str(253, domainProblem), 100),
    allow_guests: bool,
    require_approval: bool,
  }),
  login: obj({
    identifiers: list(oneOf('email', 'username', 'phone'), 3, 1),
    password: bool,
    email_otp: bool,
    magic_link: bool,
    sms_otp: bool,
    passkeys: bool,
    certificates: bool,
    remember_devices: bool,
    remember_device_days: int(1, 90),
  }),
  mfa: obj({
    requirement: oneOf('optional', 'required'),
    allowed_factors: list(oneOf('totp', 'webauthn', 'recovery_code', 'hotp'), 4),
    hotp: obj({ look_ahead: int(0, 50), resync_window: int(0, 1000) }),
    admin_phishing_resistant: bool,
  }),
  sessions: obj({
    idle_timeout_minutes: int(5, 10080),
    absolute_timeout_hours: int(1, 720),
    remember_me_days: int(1, 90),
  }),
  interaction: obj({
    login_ui_url: str(2048, urlProblem, 0),
    terms_version: str(64, plain),
    // RFC 9126 section 5, for every client of the realm (docs/oauth-endpoints.md).
    require_pushed_authorization_requests: bool,
    // The realm's brand (docs/policy.md, "interaction"); the logo is uploaded (docs/login-ui.md).
    display_name: str(100, plain),
    primary_color: str(7, colourProblem),
    support_contact: str(254, supportContactProblem),
  }),
  impersonation: obj({
    approval: oneOf('none', 'customer', 'administrator'),
    notify_customer: bool,
    allow_customer_opt_out: bool,
  }),
  password: obj({
    revoke_sessions_on_change: bool,
    history_count: int(0, 24),
    // zxcvbn score a chosen password must reach (users/password-strength.ts); 0 turns it off.
    min_strength: int(0, 4),
  }),
  notifications: obj({
    new_sign_in: bool,
    factor_changed: bool,
  }),
  webauthn: obj({
    rp_id: str(253, rpIdProblem),
    origins: list(
      str(2048, (v) => originProblem(v)),
      20,
    ),
    related_origins: list(
      str(2048, (v) => originProblem(v, true)),
      20,
    ),
    attestation: oneOf('', 'indirect', 'direct', 'enterprise'),
    require_trusted_attestation: bool,
    allowed_aaguids: list(str(36, aaguidProblem), 200),
    blocked_aaguids: list(str(36, aaguidProblem), 200),
    credential_protection: oneOf(
      '',
      'userVerificationOptionalWithCredentialIDList',
      'userVerificationRequired',
    ),
    enforce_credential_protection: bool,
    allow_synced: bool,
    user_verification: oneOf('required', 'preferred', 'discouraged'),
  }),
  lifecycle: obj({
    unverified_account_ttl_hours: int(1, 8760),
    dormant_days: int(0, 3650),
    dormant_action: oneOf('report', 'suspend'),
    guest_ttl_days: int(1, 3650),
  }),
  profile: obj({
    attributes: list(
      obj(
        {
          name: str(64, nameProblem),
          type: oneOf('string', 'boolean', 'number', 'date'),
          user_editable: bool,
          max_length: int(1, 1024),
        },
        ['name'],
      ),
      100,
    ),
    required_fields: list(str(64, nameProblem), 100),
  }),
  recovery: obj({
    cooling_off_hours: int(0, 168),
    require_approval: bool,
  }),
  data_access: obj({ log_identity_reads: bool }),
  tokens: obj({
    refresh_token_idle_days: int(1, 90),
    refresh_token_absolute_days: int(1, 365),
  }),
  domains: obj({
    auto_join_verified_domains: bool,
    home_realm_discovery: bool,
  }),
  machine: obj({
    client_secret_max_lifetime_days: int(0, 3650),
  }),
  audit: obj({ retention_days: int(0, 3650) }),
  authentication_flow: obj({
    rules: list(
      obj(
        {
          name: str(100, plain),
          conditions: obj({
            client_ids: list(str(128), 100),
            organization_ids: list(str(128), 100),
            networks: list(str(64, cidrProblem), 100),
            new_device: bool,
            account_age_max_days: int(0, 36500),
            account_age_min_days: int(0, 36500),
            user_attributes: obj({
              is_guest: bool,
              protected: bool,
              created_via: str(32),
              email_domain: str(253, domainProblem),
            }),
          }),
          outcome: oneOf(...AUTHENTICATION_FLOW_OUTCOMES),
        },
        ['outcome'],
      ),
      50,
    ),
    challenge_provider: str(64, engineNameProblem),
    email_code_alternative: bool,
  }),
  client_registration: obj({
    enabled: bool,
    open: bool,
    require_approval: bool,
    open_scopes: list(oneOf('openid', 'profile', 'email', 'phone', 'address'), 5),
  }),
  policy_engine: obj({
    name: str(64, engineNameProblem, 0),
    mode: oneOf('restrict', 'decide'),
    on_error: oneOf('deny', 'local'),
  }),
  extensions: obj({ plugin_review: oneOf('second_admin', 'single_admin') }),
  shared_signals: obj({ enabled: bool }),
};
