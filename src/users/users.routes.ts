// The users administration API under /api/v1/realms/{realm}/users (spec doc 1, "Account states"
// and "Recovery and account administration"; doc 2, Limits: page size). Routes decode and
// authorize; users.admin.ts owns the transactions.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
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
import {
  decodeCreateUser,
  decodeListQuery,
  decodeOptionalReason,
  decodeReason,
  decodeSetPassword,
  decodeUpdateProfile,
  userIdParam,
} from './users.decode.ts';
import { createAccount, listAccounts, readAccount, type UserView } from './users.service.ts';

type UserParams = { user: string };

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

  apiRoute(app, ctx, 'POST', '/users', write, async ({ req, reply, call }) => {
    const input = decodeCreateUser(req.body);
    const view = await createAccount(ctx, call, input);
    return reply.code(201).send(presentUser(view));
  });

  apiRoute(app, ctx, 'GET', '/users', read, async ({ req, realm, call }) => {
    const pages = ctx.config.limits;
    const query = decodeListQuery(req.query, pages, `${realm.id}:GET /users`);
    const page = await listAccounts(ctx.db, call, query);
    return pageBody(page, presentUser, query.binding);
  });

  apiRoute<UserParams>(app, ctx, 'GET', '/users/:user', read, async ({ req, call }) => {
    const userId = userIdParam(req.params.user);
    return presentUser(await readAccount(ctx.db, call, userId));
  });

  apiRoute<UserParams>(app, ctx, 'PATCH', '/users/:user', write, async ({ req, call }) => {
    const userId = userIdParam(req.params.user);
    const change = decodeUpdateProfile(req.body);
    return presentUser(await updateAccountProfile(ctx.db, call, userId, change));
  });

  apiRoute<UserParams>(app, ctx, 'DELETE', '/users/:user', write, async ({ req, reply, call }) => {
    const userId = userIdParam(req.params.user);
    await deleteAccount(ctx.db, call, userId);
    return reply.code(204).send();
  });

  apiRoute<UserParams>(
    app,
    ctx,
    'PUT',
    '/users/:user/password',
    credentials,
    async ({ req, reply, call }) => {
      const userId = userIdParam(req.params.user);
      const input = decodeSetPassword(req.body);
      await setAccountPassword(ctx, call, userId, input);
      return reply.code(204).send();
    },
  );

  apiRoute<UserParams>(
    app,
    ctx,
    'POST',
    '/users/:user/credentials/password/compromised',
    credentials,
    async ({ req, reply, call }) => {
      const userId = userIdParam(req.params.user);
      const reason = decodeOptionalReason(req.body);
      await markAccountPasswordCompromised(ctx.db, call, userId, reason);
      return reply.code(204).send();
    },
  );

  const stateRoute = (path: string, change: StateChange) =>
    apiRoute<UserParams>(app, ctx, 'POST', `/users/:user/${path}`, suspend, async ({ req, call }) => {
      const userId = userIdParam(req.params.user);
      const reason = decodeReason(req.body);
      return presentUser(await changeAccountState(ctx.db, call, userId, change, reason));
    });
  stateRoute('suspend', 'suspend');
  stateRoute('lock', 'lock');
  stateRoute('reactivate', 'reactivate');

  // Ending another person's sessions is a suspend-level power (doc 2, Revocation exposure lists
  // it among the account-wide revocations next to suspend and lock).
  apiRoute<UserParams>(app, ctx, 'POST', '/users/:user/revoke-sessions', suspend, async ({ req, call }) => {
    const userId = userIdParam(req.params.user);
    const reason = decodeOptionalReason(req.body);
    const revoked = await revokeAccountSessions(ctx.db, call, userId, reason);
    return { sessions_revoked: revoked.sessions.length, grants_revoked: revoked.grants };
  });
}
