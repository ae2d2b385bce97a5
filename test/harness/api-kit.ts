// Callers of the administration and account APIs for tests: an administrator (realm-admin role,
// an MFA session, a grant to identity-cli) holding an access token signed by the realm's active
// key, as the token endpoint would issue it. Tests of the token endpoint itself get their tokens
// through HTTP; this kit is for tests of what sits behind the bearer check.

import { signAccessToken } from '../../src/access/access-token.ts';
import { CLI_CLIENT_ID } from '../../src/clients/builtin-clients.ts';
import { accountAudience, adminAudience, issuerOf } from '../../src/kernel/audiences.ts';
import type { Tx } from '../../src/platform/db/db.ts';
import type { RealmRow } from '../../src/realms/realm.repo.ts';
import { assignRealmRole, findRoleByName } from '../../src/roles/builtin-roles.repo.ts';
import { upsertGrant } from '../../src/sessions/grants.repo.ts';
import { STANDARD } from '../../src/sessions/session-lifetimes.ts';
import { insertSession } from '../../src/sessions/sessions.repo.ts';
import type { Harness } from './harness.ts';

export interface ApiCallerKit {
  userId: string;
  sessionId: string;
  token: string;
  /** JSON request with the bearer; body objects are sent as application/json. */
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
}

export interface CallerOptions {
  audience?: 'admin' | 'account';
  /** Role names to assign at realm level; default realm-admin (admin) or none (account). */
  roles?: string[];
  mfa?: boolean;
  /** Seconds the sign-in lies in the past (recent-authentication tests). */
  authAgeSeconds?: number;
  email?: string;
  userId?: string;
  lifetimeSeconds?: number;
}

/**
 * A grant to identity-cli and a session behind it, signed in `authTime`, as a sign-in through the
 * CLI leaves them; tokens naming the session pass its live checks.
 */
export async function seedCliSession(
  tx: Tx,
  realmId: string,
  userId: string,
  o: { mfa: boolean; acr?: string; authTime: Date },
  now: Date,
) {
  const grant = await upsertGrant(
    tx,
    { realmId, userId, clientId: CLI_CLIENT_ID, scopes: [], resources: [] },
    now,
  );
  const session = await insertSession(
    tx,
    {
      realmId,
      userId,
      cookieDigest: null,
      amr: o.mfa ? ['pwd', 'otp'] : ['pwd'],
      acr: o.acr ?? (o.mfa ? 'mfa' : 'basic'),
      mfa: o.mfa,
      recoveryRestricted: false,
      rememberMe: false,
      transient: false,
      lifetimes: STANDARD,
    },
    now,
  );
  await tx.query('update sessions set auth_time = $3 where realm_id = $1 and id = $2', [
    realmId,
    session.id,
    o.authTime,
  ]);
  return { grant, session };
}

export async function apiCaller(
  h: Harness,
  realm: RealmRow,
  opts: CallerOptions = {},
): Promise<ApiCallerKit> {
  const audienceKind = opts.audience ?? 'admin';
  const now = h.ctx.clock.now();
  const userId =
    opts.userId ??
    (
      await h.createUser(realm, {
        email: opts.email ?? `admin-${now.getTime()}-${Math.random().toString(36).slice(2, 8)}@example.com`,
      })
    ).id;
  const roles = opts.roles ?? (audienceKind === 'admin' ? ['realm-admin'] : []);
  const authTime = new Date(now.getTime() - (opts.authAgeSeconds ?? 0) * 1000);
  const session = await h.ctx.db.tx(async (tx) => {
    for (const name of roles) {
      const role = await findRoleByName(tx, realm.id, name);
      if (!role) throw new Error(`no role ${name}`);
      await assignRealmRole(
        tx,
        { realmId: realm.id, roleId: role.id, subjectType: 'user', subjectId: userId, source: 'test' },
        now,
      );
    }
    const { session: s } = await seedCliSession(
      tx,
      realm.id,
      userId,
      { mfa: opts.mfa ?? true, authTime },
      now,
    );
    return s;
  });
  const signer = await h.ctx.keyStore.activeSigner(realm.id);
  if (!signer) throw new Error('realm has no active signing key');
  const origin = h.ctx.config.server.publicOrigin;
  const { token } = await signAccessToken(
    {
      issuer: issuerOf(origin, realm.name),
      subject: userId,
      audience:
        audienceKind === 'admin' ? adminAudience(origin, realm.name) : accountAudience(origin, realm.name),
      clientId: CLI_CLIENT_ID,
      scopes: [],
      lifetimeSeconds: opts.lifetimeSeconds ?? 300,
      authTime,
      acr: session.acr,
      amr: session.amr,
      sessionId: session.id,
    },
    signer,
    now,
  );
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    h.get(`/api/v1/realms/${realm.name}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
  return { userId, sessionId: session.id, token, call };
}
