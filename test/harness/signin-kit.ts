// Shared pieces of the sign-in integration tests: a clock tests can move, the TOTP codes an
// authenticator app would show, a browser driver for the authorize endpoint and the cookie
// binding, and row readers for the "nothing changed" checks.
import { createHash } from 'node:crypto';
import type { TestContext } from 'node:test';
import type { ClientRow, NewClient } from '../../src/clients/clients.repo.ts';
import { decodeBase32 } from '../../src/mfa/base32.ts';
import { totpAt, totpStep } from '../../src/mfa/otp.ts';
import type { Clock } from '../../src/platform/clock.ts';
import type { Db } from '../../src/platform/db/db.ts';
import type { Logger } from '../../src/platform/log.ts';
import type { RealmRow } from '../../src/realms/realm.repo.ts';
import type { UserRow } from '../../src/users/users.repo.ts';
import type { NewUser } from '../../src/users/users.service.ts';
import { type Harness, startHarness } from './harness.ts';
import { type JsonResponse, json, newVerifier, startBody, startHeadless } from './signin-driver.ts';

export const REDIRECT = 'https://app.example.com/callback';
export const PASSWORD = 'correct-horse-9';

// ---- time ------------------------------------------------------------------------------------

export interface MovableClock extends Clock {
  advance(ms: number): void;
}

/**
 * Starts at the real time (signing keys and policies are written with it) and moves on request;
 * code that waits for a later time moves it there at once.
 */
export function movableClock(start = Date.now()): MovableClock {
  let t = start;
  return {
    now: () => new Date(t),
    advance: (ms) => {
      t += ms;
    },
    waitUntil: async (at) => {
      t = Math.max(t, at.getTime());
    },
  };
}

// ---- setup ----------------------------------------------------------------------------------

export interface SigninSetupOptions {
  clock?: Clock;
  /** A database of the test's own (migrated) instead of this file's database. */
  db?: Db;
  overrides?: Record<string, unknown>;
  /** The application's logger, for tests that read what the service logged (default silent). */
  log?: Logger;
  /** Sets the realm's interaction.login_ui_url (before the client is created). */
  loginUi?: string | undefined;
  /** Members over the 'web-app' client (web, REDIRECT); null creates no client. */
  client?: Partial<NewClient> | null;
  /** Members over alice@example.com with PASSWORD; null creates no user. */
  user?: Partial<Omit<NewUser, 'createdVia'>> | null;
}

export interface SigninSetup<O extends SigninSetupOptions> {
  h: Harness;
  realm: RealmRow;
  client: O extends { client: null } ? null : ClientRow;
  user: O extends { user: null } ? null : UserRow;
  /** The clock passed in, else the harness clock. */
  clock: O extends { clock: infer C extends Clock } ? C : Clock;
}

/**
 * The usual sign-in test setup: a harness, a fresh realm, optionally the login UI policy, the
 * 'web-app' client and the user alice@example.com, each adjustable or left out with null.
 */
export async function signinSetup<const O extends SigninSetupOptions = Record<never, never>>(
  t: TestContext,
  opts: O = {} as O,
): Promise<SigninSetup<O>> {
  const h = await startHarness(t, {
    ...(opts.overrides ? { overrides: opts.overrides } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.db ? { db: opts.db } : {}),
    ...(opts.log ? { log: opts.log } : {}),
  });
  const realm = await h.createRealm();
  if (opts.loginUi) await h.setPolicy(realm, { interaction: { login_ui_url: opts.loginUi } });
  const client =
    opts.client === null
      ? null
      : await h.createClient(realm, {
          clientId: 'web-app',
          name: 'Web App',
          type: 'web',
          redirectUris: [REDIRECT],
          ...opts.client,
        });
  const user =
    opts.user === null
      ? null
      : await h.createUser(realm, { email: 'alice@example.com', password: PASSWORD, ...opts.user });
  return { h, realm, client, user, clock: opts.clock ?? h.ctx.clock } as SigninSetup<O>;
}

// ---- TOTP ------------------------------------------------------------------------------------

/**
 * The TOTP code of a base32 secret at an instant, as the user's authenticator app shows it. This
 * drives sign-ins; it is not the oracle: src/mfa/otp.test.ts compares our codes with oathtool's.
 */
export function totpCode(secretBase32: string, at: Date): string {
  return totpAt(decodeBase32(secretBase32), totpStep(at.getTime()));
}

/** A six-digit string that is not the code of any step in the verification window. */
export function wrongTotpCode(secretBase32: string, at: Date): string {
  const taken = new Set([-30_000, 0, 30_000].map((d) => totpCode(secretBase32, new Date(at.getTime() + d))));
  for (let n = 0; ; n++) {
    const c = String(n).padStart(6, '0');
    if (!taken.has(c)) return c;
  }
}

// ---- rows ------------------------------------------------------------------------------------

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary columns
export type Row = Record<string, any>;

export async function rows(h: Harness, sql: string, params: unknown[] = []): Promise<Row[]> {
  return (await h.ctx.db.query<Row>(sql, params)).rows;
}

export async function count(h: Harness, sql: string, params: unknown[] = []): Promise<number> {
  const r = await rows(h, `select count(*)::int as n from (${sql}) x`, params);
  return Number(r[0]?.n ?? 0);
}

export const events = (h: Harness, realm: RealmRow, type: string) =>
  rows(h, 'select * from outbox where realm_id = $1 and event_type = $2 order by id', [realm.id, type]);

export const audits = (h: Harness, realm: RealmRow, type: string) =>
  rows(h, 'select * from audit_events where realm_id = $1 and type = $2 order by id', [realm.id, type]);

async function oneRow(h: Harness, sql: string, params: unknown[]): Promise<Row> {
  const [row] = await rows(h, sql, params);
  if (!row) throw new Error(`no row for ${JSON.stringify(params)}`);
  return row;
}

/**
 * Proves a primary factor with one step (`path`, `body`), then takes the still pending transaction
 * back to before it, so the same step is offered again: from then on only the used code's or
 * link's own consumption can refuse a second use. Returns the state after the rewind.
 */
export async function provedThenRewound(
  h: Harness,
  realm: RealmRow,
  tx: { id: string; step(path: string, body?: unknown): Promise<JsonResponse>; get(): Promise<JsonResponse> },
  proof: { path: string; body: unknown; factor: string },
): Promise<JsonResponse> {
  const first = await tx.step(proof.path, proof.body);
  if (first.body?.status !== 'pending' || !first.body.completed_factors?.includes(proof.factor))
    throw new Error(`${proof.path} did not prove ${proof.factor}: ${JSON.stringify(first.body)}`);
  await h.ctx.db.query(
    `update signin_transactions set completed_factors = '{}' where realm_id = $1 and id = $2 and status = 'pending'`,
    [realm.id, tx.id],
  );
  return tx.get();
}

export const txRow = (h: Harness, realm: RealmRow, id: string) =>
  oneRow(h, 'select * from signin_transactions where realm_id = $1 and id = $2', [realm.id, id]);

export const userRow = (h: Harness, realm: RealmRow, userId: string) =>
  oneRow(h, 'select * from users where realm_id = $1 and id = $2', [realm.id, userId]);

export const sha256Hex = (s: string) => createHash('sha256').update(s).digest('hex');

/** What a refusal must leave untouched in a realm: no code, no session, no sign-in event. */
export async function issuedSoFar(h: Harness, realm: RealmRow) {
  return {
    codes: await count(h, 'select 1 from authorization_codes where realm_id = $1', [realm.id]),
    sessions: await count(h, 'select 1 from sessions where realm_id = $1', [realm.id]),
    signedIn: await count(h, `select 1 from outbox where realm_id = $1 and event_type = 'user.signed_in'`, [
      realm.id,
    ]),
    transactions: await count(h, 'select 1 from signin_transactions where realm_id = $1', [realm.id]),
  };
}

export const nothingIssued = { codes: 0, sessions: 0, signedIn: 0 };

export async function assertNothingIssued(h: Harness, realm: RealmRow): Promise<void> {
  const s = await issuedSoFar(h, realm);
  const { transactions: _t, ...issued } = s;
  if (issued.codes !== 0 || issued.sessions !== 0 || issued.signedIn !== 0) {
    throw new Error(`expected nothing issued, found ${JSON.stringify(issued)}`);
  }
}

// ---- responses -------------------------------------------------------------------------------

export const actionTypes = (state: { next_actions: { type: string }[] }) =>
  state.next_actions.map((a) => a.type);

export function redirectParams(redirectTo: string): URLSearchParams {
  return new URL(redirectTo).searchParams;
}

export function codeOf(redirectTo: string): string {
  const code = redirectParams(redirectTo).get('code');
  if (!code) throw new Error(`no code in ${redirectTo}`);
  return code;
}

// ---- browser ---------------------------------------------------------------------------------

export interface SetCookie {
  name: string;
  value: string;
  attributes: Record<string, string | true>;
}

export function parseSetCookies(headers: Headers): SetCookie[] {
  return headers.getSetCookie().map((line) => {
    const [pair = '', ...attrs] = line.split(';').map((s) => s.trim());
    const eq = pair.indexOf('=');
    const attributes: Record<string, string | true> = {};
    for (const a of attrs) {
      const i = a.indexOf('=');
      if (i < 0) attributes[a.toLowerCase()] = true;
      else attributes[a.slice(0, i).toLowerCase()] = a.slice(i + 1);
    }
    return { name: pair.slice(0, eq), value: pair.slice(eq + 1), attributes };
  });
}

export function authorizeQuery(clientId: string, redirectUri: string, extra: Record<string, string> = {}) {
  const verifier = newVerifier();
  const body = startBody(clientId, redirectUri, verifier);
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: body.client_id,
    redirect_uri: body.redirect_uri,
    code_challenge: body.code_challenge,
    code_challenge_method: body.code_challenge_method,
    scope: body.scope,
    state: body.state,
    nonce: body.nonce,
    ...extra,
  });
  return { verifier, params };
}

export const authorize = (h: Harness, realmName: string, params: URLSearchParams | string) =>
  h.get(`/realms/${realmName}/oauth/authorize?${params.toString()}`, { redirect: 'manual' });

export interface BrowserTx {
  id: string;
  cookie: string;
  verifier: string;
  /** The authorize response (303 to the login UI). */
  response: Response;
  location: URL;
  txCookie: SetCookie;
  /** GET of the state with the cookie (returns csrf_token). */
  get(headers?: Record<string, string>): Promise<JsonResponse>;
  /** A POST step as the login UI sends it: cookie, Origin and CSRF token unless overridden. */
  step(path: string, body?: unknown, headers?: Record<string, string | null>): Promise<JsonResponse>;
  csrf(): Promise<string>;
}

export async function startBrowser(
  h: Harness,
  realmName: string,
  clientId: string,
  redirectUri: string,
  opts: { extra?: Record<string, string>; origin?: string } = {},
): Promise<BrowserTx> {
  const { verifier, params } = authorizeQuery(clientId, redirectUri, opts.extra);
  const response = await authorize(h, realmName, params);
  if (response.status !== 303)
    throw new Error(`authorize failed: ${response.status} ${await response.text()}`);
  const location = new URL(response.headers.get('location') ?? '');
  const id = location.searchParams.get('transaction_id') ?? '';
  const txCookie = parseSetCookies(response.headers).find((c) => c.name === 'pa_tx');
  if (!txCookie) throw new Error('authorize set no pa_tx cookie');
  const cookie = txCookie.value;
  const base = `/api/v1/realms/${realmName}/auth/transactions/${id}`;
  const origin = opts.origin ?? h.ctx.config.server.publicOrigin;
  let csrf: string | null = null;
  const tx: BrowserTx = {
    id,
    cookie,
    verifier,
    response,
    location,
    txCookie,
    get: async (headers = { cookie: `pa_tx=${cookie}` }) => json(await h.get(base, { headers })),
    csrf: async () => {
      if (csrf === null) {
        const s = await tx.get();
        if (s.status !== 200) throw new Error(`GET failed: ${s.status} ${JSON.stringify(s.body)}`);
        csrf = s.body.csrf_token as string;
      }
      return csrf;
    },
    step: async (path, body = {}, overrides = {}) => {
      const headers: Record<string, string | null> = {
        'content-type': 'application/json',
        cookie: `pa_tx=${cookie}`,
        origin,
        'x-csrf-token': await tx.csrf(),
        ...overrides,
      };
      const sent: Record<string, string> = {};
      for (const [k, v] of Object.entries(headers)) if (v !== null) sent[k] = v;
      return json(
        await h.get(`${base}/${path}`, { method: 'POST', headers: sent, body: JSON.stringify(body) }),
      );
    },
  };
  return tx;
}

// ---- flows -----------------------------------------------------------------------------------

/** A headless sign-in through identify and password; returns the transaction and the last state. */
export async function passwordSignIn(
  h: Harness,
  realmName: string,
  clientId: string,
  email: string,
  password = PASSWORD,
  extra: Record<string, unknown> = {},
) {
  const tx = await startHeadless(h, realmName, clientId, REDIRECT, extra);
  const identified = await tx.step('identify', { identifier: email });
  if (identified.status !== 200) throw new Error(`identify failed: ${JSON.stringify(identified.body)}`);
  const state = await tx.step('password', { password });
  return { tx, state };
}

/**
 * Gives the account a TOTP authenticator through a sign-in transaction (required action
 * configure_totp, totp/enroll, totp/activate). Returns the secret and the recovery codes.
 */
export async function enrollTotp(
  h: Harness,
  realm: RealmRow,
  clientId: string,
  email: string,
  clock: Clock,
): Promise<{ secret: string; recoveryCodes: string[]; state: JsonResponse }> {
  await h.ctx.db.query(
    `update users u set required_actions = array_append(u.required_actions, 'configure_totp')
      from user_identifiers i where i.realm_id = u.realm_id and i.user_id = u.id and u.realm_id = $1
        and i.value = $2 and not ('configure_totp' = any(u.required_actions))`,
    [realm.id, email],
  );
  const { tx, state } = await passwordSignIn(h, realm.name, clientId, email);
  if (!actionTypes(state.body).includes('enroll_totp')) {
    throw new Error(`enroll_totp not offered: ${JSON.stringify(state.body)}`);
  }
  const enrolled = await tx.step('totp/enroll', {});
  const secret: string = enrolled.body.one_time.totp.secret;
  const activated = await tx.step('totp/activate', { code: totpCode(secret, clock.now()) });
  if (activated.body.status !== 'completed')
    throw new Error(`activation failed: ${JSON.stringify(activated.body)}`);
  return { secret, recoveryCodes: activated.body.one_time.recovery_codes, state: activated };
}

/** The session behind the code a transaction issued. */
export const sessionOfTx = async (h: Harness, realmId: string, txId: string): Promise<Row | undefined> =>
  (
    await rows(
      h,
      `select s.* from authorization_codes c join sessions s on s.realm_id = c.realm_id and s.id = c.session_id
        where c.realm_id = $1 and c.transaction_id = $2`,
      [realmId, txId],
    )
  )[0];

/** Moves to the next 30-second TOTP step, so the code differs from the one used before. */
export const nextTotpStep = (clock: MovableClock) => clock.advance(30_000);
