// Callers of the administration, account and decision APIs for tests, signed in the way an operator
// signs in: a headless transaction of the built-in identity-cli client (identify, password, TOTP
// enrollment or TOTP), then the code exchanged at the token endpoint with PKCE and the resource,
// and the refresh token used whenever the access token has lapsed on the harness clock. Nothing
// here writes a session, an authentication time or an MFA flag.

import { CLI_CLIENT_ID } from '../../src/clients/builtin-clients.ts';
import { accountAudience, adminAudience } from '../../src/kernel/audiences.ts';
import type { RealmRow } from '../../src/realms/realm.repo.ts';
import { assignRealmRole, findRoleByName } from '../../src/roles/builtin-roles.repo.ts';
import type { Harness } from './harness.ts';
import { type JsonResponse, json, startHeadless } from './signin-driver.ts';
import { actionTypes, codeOf, PASSWORD, sessionOfTx, totpCode } from './signin-kit.ts';
import { oauthPost } from './token-kit.ts';

/** identity-cli accepts any loopback port (RFC 8252 section 7.3); the code is read from the answer. */
export const CLI_REDIRECT = 'http://127.0.0.1/callback';

export interface CliTokens {
  accessToken: string;
  refreshToken: string;
  sessionId: string;
  /** Refreshes now (the access token keeps the sign-in's auth_time, acr and amr). */
  refresh(): Promise<string>;
  /** The access token, refreshed first when it has lapsed on the harness clock. */
  usable(): Promise<string>;
}

export interface CliSignInOptions {
  /** Audiences requested (RFC 8707); the first one is the token's. */
  resources: string[];
  /** Scopes beyond openid. */
  scopes?: string[];
  organization?: string;
  /** acr_values of the request, e.g. 'mfa' to have a second factor asked for. */
  acrValues?: string;
  /** DPoP: the proof header of each token request, given the token endpoint's URL (RFC 9449). */
  dpopProof?: (url: string) => Promise<string>;
}

// TOTP secrets the kits enrolled, per harness and user, and the last step each one spent: the
// service refuses a code of a step already used (replay), so a second sign-in in the same
// 30-second step moves the harness clock to the next one.
const enrolled = new WeakMap<Harness, Map<string, { secret: string; lastStep: number }>>();

function totpSecrets(h: Harness) {
  const m = enrolled.get(h) ?? new Map<string, { secret: string; lastStep: number }>();
  enrolled.set(h, m);
  return m;
}

const stepOf = (at: Date) => Math.floor(at.getTime() / 30_000);

async function expectOk(what: string, r: JsonResponse): Promise<JsonResponse> {
  if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
  return r;
}

/**
 * Signs the user in through identity-cli and exchanges the code. MFA happens when the service asks
 * for it (an administration audience, a privileged role, an enrolled authenticator): enrollment on
 * the first time, then the TOTP of the enrolled secret.
 */
export async function cliSignIn(
  h: Harness,
  realm: RealmRow,
  user: { id: string; email: string; password?: string },
  o: CliSignInOptions,
): Promise<CliTokens> {
  const tx = await startHeadless(h, realm.name, CLI_CLIENT_ID, CLI_REDIRECT, {
    scope: ['openid', ...(o.scopes ?? [])].join(' '),
    resource: o.resources,
    ...(o.organization ? { organization: o.organization } : {}),
    ...(o.acrValues ? { acr_values: o.acrValues } : {}),
  });
  await expectOk('identify', await tx.step('identify', { identifier: user.email }));
  let state = await expectOk('password', await tx.step('password', { password: user.password ?? PASSWORD }));
  if (actionTypes(state.body).includes('password'))
    throw new Error(`the password of ${user.email} was refused`);
  const secrets = totpSecrets(h);
  while (state.body.status !== 'completed') {
    const next = actionTypes(state.body);
    if (next.includes('enroll_totp')) {
      const secret: string = (await expectOk('totp/enroll', await tx.step('totp/enroll', {}))).body.one_time
        .totp.secret;
      const now = h.clock.now();
      state = await expectOk(
        'totp/activate',
        await tx.step('totp/activate', { code: totpCode(secret, now) }),
      );
      secrets.set(user.id, { secret, lastStep: stepOf(now) });
    } else if (next.includes('totp')) {
      const known = secrets.get(user.id);
      if (!known) throw new Error(`user ${user.id} has a TOTP authenticator this kit did not enroll`);
      if (stepOf(h.clock.now()) <= known.lastStep) h.clock.advance(30_000);
      const now = h.clock.now();
      state = await expectOk('totp', await tx.step('totp', { code: totpCode(known.secret, now) }));
      known.lastStep = stepOf(now);
    } else if (next.includes('organization')) {
      state = await expectOk('organization', await tx.step('organization', { organization: o.organization }));
    } else {
      throw new Error(`sign-in stopped at ${JSON.stringify(state.body)}`);
    }
  }
  const code = codeOf(state.body.redirect_to);
  const session = await sessionOfTx(h, realm.id, tx.id);
  if (!session) throw new Error('the code names no session');
  const sessionId: string = session.id;
  const resource = o.resources[0] ?? '';
  const tokenUrl = `${h.ctx.config.server.publicOrigin}/realms/${realm.name}/oauth/token`;
  const dpop = async (): Promise<Record<string, string>> =>
    o.dpopProof ? { dpop: await o.dpopProof(tokenUrl) } : {};
  const exchanged = await oauthPost(
    h,
    realm,
    'token',
    {
      grant_type: 'authorization_code',
      client_id: CLI_CLIENT_ID,
      code,
      redirect_uri: CLI_REDIRECT,
      code_verifier: tx.verifier,
      resource,
    },
    undefined,
    await dpop(),
  );
  if (exchanged.status !== 200) throw new Error(`code exchange: ${JSON.stringify(exchanged.body)}`);
  let access: string = exchanged.body.access_token;
  let refreshToken: string = exchanged.body.refresh_token;
  const lapsesAt = (r: JsonResponse) => h.clock.now().getTime() + Number(r.body.expires_in) * 1000;
  let expiresAt = lapsesAt(exchanged);
  const tokens: CliTokens = {
    get accessToken() {
      return access;
    },
    get refreshToken() {
      return refreshToken;
    },
    sessionId,
    async refresh() {
      const r = await oauthPost(
        h,
        realm,
        'token',
        { grant_type: 'refresh_token', client_id: CLI_CLIENT_ID, refresh_token: refreshToken, resource },
        undefined,
        await dpop(),
      );
      if (r.status !== 200) throw new Error(`refresh: ${r.status} ${JSON.stringify(r.body)}`);
      access = r.body.access_token;
      refreshToken = r.body.refresh_token;
      expiresAt = lapsesAt(r);
      return access;
    },
    async usable() {
      return expiresAt - 30_000 > h.clock.now().getTime() ? access : tokens.refresh();
    },
  };
  return tokens;
}

export interface ApiCallerKit {
  userId: string;
  email: string;
  sessionId: string;
  /** The current access token (a refresh replaces it). */
  readonly token: string;
  /** JSON request with a usable bearer; body objects are sent as application/json. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
}

export interface CallerOptions {
  audience?: 'admin' | 'account';
  /** Role names to assign at realm level; default realm-admin (admin) or none (account). */
  roles?: string[];
  email?: string;
  /** An existing user instead of a new one. */
  userId?: string;
  /** The existing user's password (default the harness PASSWORD). */
  password?: string;
}

/**
 * A caller of the administration (default) or account API: a new user, or the one named, with the
 * roles, signed in through identity-cli. Each call is a separate sign-in and session.
 */
export async function apiCaller(
  h: Harness,
  realm: RealmRow,
  opts: CallerOptions = {},
): Promise<ApiCallerKit> {
  const audienceKind = opts.audience ?? 'admin';
  const origin = h.ctx.config.server.publicOrigin;
  const user = opts.userId
    ? { id: opts.userId, email: await emailOf(h, realm, opts.userId), password: opts.password }
    : await newUser(h, realm, opts.email);
  const roles = opts.roles ?? (audienceKind === 'admin' ? ['realm-admin'] : []);
  await assignRoles(h, realm, user.id, roles);
  const audience =
    audienceKind === 'admin' ? adminAudience(origin, realm.name) : accountAudience(origin, realm.name);
  const tokens = await cliSignIn(h, realm, user, { resources: [audience] });
  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    h.get(`/api/v1/realms/${realm.name}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${await tokens.usable()}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  return {
    userId: user.id,
    email: user.email,
    sessionId: tokens.sessionId,
    get token() {
      return tokens.accessToken;
    },
    call,
  };
}

async function newUser(h: Harness, realm: RealmRow, email?: string) {
  const address = email ?? `caller-${Math.random().toString(36).slice(2, 10)}@example.com`;
  const u = await h.createUser(realm, { email: address, password: PASSWORD });
  return { id: u.id, email: address };
}

/** Calls the account API (`/me...`) of the realm with a bearer token; `body` is sent as JSON. */
export const meCaller =
  (h: Harness, realm: RealmRow) =>
  async (token: string, method: string, path: string, body?: unknown): Promise<JsonResponse> =>
    json(
      await h.get(`/api/v1/realms/${realm.name}/me${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
    );

export async function emailOf(h: Harness, realm: RealmRow, userId: string): Promise<string> {
  const r = await h.ctx.db.query<{ value: string }>(
    `select value from user_identifiers where realm_id = $1 and user_id = $2 and type = 'email' limit 1`,
    [realm.id, userId],
  );
  const email = r.rows[0]?.value;
  if (!email) throw new Error(`user ${userId} has no email to sign in with`);
  return email;
}

/**
 * Realm-level role assignments written through the roles repository: a speed shortcut for what an
 * administrator does with POST /role-assignments (the roles suites test that API).
 */
export async function assignRoles(h: Harness, realm: RealmRow, userId: string, roles: string[]) {
  if (roles.length === 0) return;
  const now = h.clock.now();
  await h.ctx.db.tx(async (tx) => {
    for (const name of roles) {
      const role = await findRoleByName(tx, realm.id, name);
      if (!role) throw new Error(`no role ${name}`);
      await assignRealmRole(
        tx,
        { realmId: realm.id, roleId: role.id, subjectType: 'user', subjectId: userId, source: 'test' },
        now,
      );
    }
  });
}
