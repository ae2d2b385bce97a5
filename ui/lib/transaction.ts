// The sign-in transaction API as the login UI uses it (docs/login-ui.md): browser mode, bound to
// the transaction's HttpOnly cookie; every step sends the CSRF token from the state read. The
// browser adds the Origin header itself.

export interface NextAction {
  type: string;
  /** false for each of a set of alternatives, which share options.group. */
  required: boolean;
  fields: string[];
  options?: Record<string, unknown> & { group?: string };
}

export interface TxState {
  id: string;
  status: 'pending' | 'completed' | 'failed' | 'cancelled' | 'expired';
  intent: string;
  client: { client_id: string; name: string };
  next_actions: NextAction[];
  completed_factors: string[];
  user?: { display_name: string | null; email_hint?: string };
  redirect_to?: string;
  error?: string;
  one_time?: { totp?: { secret: string; otpauth_uri: string }; recovery_codes?: string[] };
  csrf_token?: string;
  locale?: string;
  /** Passkey ceremony options for the browser WebAuthn API. */
  webauthn?: Record<string, unknown>;
  /** A condition worth telling: upstream_unavailable, account_conflict. */
  notice?: string;
  /** Where federation/start sends the browser: the upstream provider's sign-in. */
  external_redirect?: string;
}

/** An RFC 9457 problem answer; `code` is the service's problem code. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    /** A step on a transaction that is no longer pending names its status (e.g. `expired`). */
    readonly transactionStatus: string | null = null,
    /** A 429's Retry-After in seconds: how long the sign-in budget stays spent. */
    readonly retryAfterSeconds: number | null = null,
    /** A spent password budget's 429: the mailbox ways still open (email_otp, magic_link). */
    readonly alternatives: string[] = [],
  ) {
    super(detail);
  }
}

/** Retry-After as seconds (RFC 9110 10.2.3: a number of seconds or an HTTP date); null if absent. */
function retryAfterOf(value: string | null): number | null {
  if (!value) return null;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed);
  const at = Date.parse(trimmed);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

async function problemOf(res: Response): Promise<ApiProblem> {
  let body: {
    code?: unknown;
    error?: unknown;
    detail?: unknown;
    transaction_status?: unknown;
    alternatives?: unknown;
    errors?: { field?: unknown; code?: unknown }[];
  } = {};
  try {
    body = await res.json();
  } catch {
    // not a problem body: the status alone speaks
  }
  // A refused passkey names its reason on the credential field (authenticator_not_allowed, ...);
  // a refused new password names its own (password_reused, too_weak), as does a registration's
  // password below the rule shown under the field.
  const first = Array.isArray(body.errors) ? body.errors[0] : undefined;
  const passwordRule =
    first?.field === 'password' && (first.code === 'too_weak' || first.code === 'too_short');
  const named = first?.field === 'credential' || first?.field === 'new_password' || passwordRule;
  const fieldCode = named && typeof first?.code === 'string' ? first.code : null;
  const code =
    fieldCode ??
    (typeof body.code === 'string' ? body.code : typeof body.error === 'string' ? body.error : 'http');
  const status = typeof body.transaction_status === 'string' ? body.transaction_status : null;
  return new ApiProblem(
    res.status,
    code,
    typeof body.detail === 'string' ? body.detail : res.statusText,
    status,
    retryAfterOf(res.headers.get('retry-after')),
    Array.isArray(body.alternatives)
      ? body.alternatives.filter((a): a is string => typeof a === 'string')
      : [],
  );
}

export class Transaction {
  private csrf = '';

  constructor(
    readonly apiBase: string,
    readonly realm: string,
    readonly id: string,
    /** A headless transaction (the device page starts one): its continuation token, no cookie. */
    private readonly continuation: string | null = null,
  ) {}

  /** Starts a headless transaction for a device's user code (docs/oauth-device.md). */
  static async startDevice(
    apiBase: string,
    realm: string,
    userCode: string,
  ): Promise<[Transaction, TxState]> {
    const res = await fetch(`${apiBase}/api/v1/realms/${encodeURIComponent(realm)}/auth/transactions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ client_id: 'account', intent: 'device', device_user_code: userCode }),
    });
    if (!res.ok) throw await problemOf(res);
    const body = (await res.json()) as { transaction_id: string; continuation_token: string; state: TxState };
    return [new Transaction(apiBase, realm, body.transaction_id, body.continuation_token), body.state];
  }

  private headers(): Record<string, string> {
    return this.continuation ? { 'x-transaction-token': this.continuation } : { 'x-csrf-token': this.csrf };
  }

  private get url(): string {
    return `${this.apiBase}/api/v1/realms/${encodeURIComponent(this.realm)}/auth/transactions/${encodeURIComponent(this.id)}`;
  }

  async read(): Promise<TxState> {
    const res = await fetch(this.url, {
      credentials: 'include',
      headers: { accept: 'application/json', ...(this.continuation ? this.headers() : {}) },
    });
    if (!res.ok) throw await problemOf(res);
    const state = (await res.json()) as TxState;
    if (state.csrf_token) this.csrf = state.csrf_token;
    return state;
  }

  /** POSTs one step (`path` below the transaction, e.g. `password` or `totp/activate`). */
  async step(path: string, body: Record<string, unknown> = {}): Promise<TxState> {
    const res = await fetch(`${this.url}/${path}`, {
      method: 'POST',
      credentials: 'include',
      headers: { 'content-type': 'application/json', accept: 'application/json', ...this.headers() },
      body: JSON.stringify(body),
    });
    if (!res.ok) throw await problemOf(res);
    return (await res.json()) as TxState;
  }
}
