// The users administration API under /api/v1/realms/{realm}/users (spec doc 1, "Account states"
// and "Recovery and account administration"; doc 2, Limits: page size). Each route is declared with
// its schemas (users.schema.ts, docs/openapi.md); users.admin.ts owns the transactions.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { declaredApiRoute } from '../api/declared-route.ts';
import { pageBody } from '../platform/http/keyset.ts';
import {
  changeAccountState,
  deleteAccount,
  markAccountPasswordCompromised,
  revokeAccountSessions,
  type StateChange,
  setAccountPassword,
  updateAccountProfile,
} from './users.admin.ts';
import { decodeListQuery } from './users.decode.ts';
import { checkNewUser, profileChange, USER_ROUTES as R } from './users.schema.ts';
import { createAccount, listAccounts, readAccount, type UserView } from './users.service.ts';

const iso = (d: Date | string | null): string | null => (d === null ? null : new Date(d).toISOString());

/** The user representation: state, profile and identifiers; never any credential material. */
export function presentUser({ user, identifiers }: UserView) {
  return {
    id: user.id,
    state: user.state,
    display_name: user.display_name,
    identifiers: identifiers.map(presentIdentifier),
    required_actions: user.required_actions,
    created_via: user.created_via,
    created_at: iso(user.created_at),
    updated_at: iso(user.updated_at),
    last_login_at: iso(user.last_login_at),
    scheduled_deactivation: user.deactivate_at
      ? { at: iso(user.deactivate_at), reason: user.deactivation_reason ?? null }
      : null,
  };
}

/** One identifier as the user representation lists it. */
export const presentIdentifier = (i: UserView['identifiers'][number]) => ({
  id: i.id,
  type: i.type,
  value: i.value,
  verified: i.verified,
  primary: i.is_primary,
});

export function registerUserRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const read = { audience: 'admin', permissions: ['realm.users.read'] } as const;
  const write = { audience: 'admin', permissions: ['realm.users.write'] } as const;
  const suspend = { audience: 'admin', permissions: ['realm.users.suspend'] } as const;
  const credentials = { audience: 'admin', permissions: ['realm.users.credentials.manage'] } as const;

  declaredApiRoute(app, ctx, 'POST', '/users', write, R.create, async ({ body, reply, call }) => {
    const view = await createAccount(ctx, call, checkNewUser(body));
    return reply.code(201).send(presentUser(view));
  });

  // The query stays with the keyset reader (cursor binding); the schema describes it.
  declaredApiRoute(app, ctx, 'GET', '/users', read, R.list, async ({ req, realm, call }) => {
    const pages = ctx.config.limits;
    const query = decodeListQuery(req.query, pages, `${realm.id}:GET /users`);
    const page = await listAccounts(ctx.db, call, query);
    return pageBody(page, presentUser, query.binding);
  });

  declaredApiRoute(app, ctx, 'GET', '/users/:user', read, R.read, async ({ req, call }) =>
    presentUser(await readAccount(ctx.db, call, req.params.user)),
  );

  declaredApiRoute(app, ctx, 'PATCH', '/users/:user', write, R.update, async ({ req, body, call }) =>
    presentUser(await updateAccountProfile(ctx.db, call, req.params.user, profileChange(body))),
  );

  declaredApiRoute(app, ctx, 'DELETE', '/users/:user', write, R.delete, async ({ req, reply, call }) => {
    await deleteAccount(ctx.db, call, req.params.user);
    return reply.code(204).send();
  });

  declaredApiRoute(
    app,
    ctx,
    'PUT',
    '/users/:user/password',
    credentials,
    R.setPassword,
    async ({ req, body, reply, call }) => {
      await setAccountPassword(ctx, call, req.params.user, body);
      return reply.code(204).send();
    },
  );

  declaredApiRoute(
    app,
    ctx,
    'POST',
    '/users/:user/credentials/password/compromised',
    credentials,
    R.passwordCompromised,
    async ({ req, body, reply, call }) => {
      await markAccountPasswordCompromised(ctx.db, call, req.params.user, body.reason ?? null);
      return reply.code(204).send();
    },
  );

  const stateRoute = (path: string, change: StateChange) =>
    declaredApiRoute(
      app,
      ctx,
      'POST',
      `/users/:user/${path}`,
      suspend,
      R.stateChange,
      async ({ req, body, call }) =>
        presentUser(await changeAccountState(ctx.db, call, req.params.user, change, body.reason)),
    );
  stateRoute('suspend', 'suspend');
  stateRoute('lock', 'lock');
  stateRoute('reactivate', 'reactivate');

  // Ending another person's sessions is a suspend-level power (doc 2, Revocation exposure lists
  // it among the account-wide revocations next to suspend and lock).
  declaredApiRoute(
    app,
    ctx,
    'POST',
    '/users/:user/revoke-sessions',
    suspend,
    R.revokeSessions,
    async ({ req, body, call }) => {
      const revoked = await revokeAccountSessions(ctx.db, call, req.params.user, body.reason ?? null);
      return { sessions_revoked: revoked.sessions.length, grants_revoked: revoked.grants };
    },
  );
}
