// HTTP edge of linked identities and account merge (docs/federation.md, Linked identities and
// Merging accounts): GET and DELETE /users/{user}/linked-identities[/{id}] for administrators
// (realm.users.read; removing is realm.users.credentials.manage, doc 2 lists it among the
// revocation helpers), the same under /me for the account's owner (recent authentication to
// remove), and POST /users/{user}/merges (realm.users.write, recent authentication).
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { requireRecentAuth } from '../api/api-auth.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeBody, decodeNoBody, object, string } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { userIdParam } from '../users/users.decode.ts';
import { mergeAccounts } from './account-merge.ts';
import type { LinkedIdentityView } from './linked-identities.repo.ts';
import { listLinkedIdentities, unlinkIdentity } from './linked-identities.service.ts';

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

export const presentLinkedIdentity = (l: LinkedIdentityView) => ({
  id: l.id,
  provider_id: l.provider_id,
  provider_alias: l.provider_alias,
  provider_display_name: l.provider_display_name,
  upstream_issuer: l.upstream_issuer,
  upstream_subject: l.upstream_subject,
  upstream_email: l.upstream_email,
  provenance: l.provenance,
  created_at: iso(l.created_at),
  last_used_at: iso(l.last_used_at),
});

const mergeBody = object({
  source_user_id: string({ minLength: 1, maxLength: 64, printableAscii: true }),
  reason: string({ minLength: 1, maxLength: 500, pattern: /[^\p{Cc}]+/u }),
});

type One = { user: string; id: string };

export function registerLinkedIdentityRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const read = { audience: 'admin', permissions: ['realm.users.read'] } as const;
  const manage = { audience: 'admin', permissions: ['realm.users.credentials.manage'] } as const;
  const merge = { audience: 'admin', permissions: ['realm.users.write'], recentAuth: true } as const;
  const account = { audience: 'account' } as const;

  apiRoute<{ user: string }>(
    app,
    ctx,
    'GET',
    '/users/:user/linked-identities',
    read,
    async ({ req, realm }) => {
      const userId = userIdParam(req.params.user);
      return { items: (await listLinkedIdentities(ctx.db, realm.id, userId)).map(presentLinkedIdentity) };
    },
  );

  apiRoute<One>(
    app,
    ctx,
    'DELETE',
    '/users/:user/linked-identities/:id',
    manage,
    async ({ req, reply, call }) => {
      decodeNoBody(req.body);
      await unlinkIdentity(ctx.db, call, userIdParam(req.params.user), req.params.id);
      return reply.code(204).send();
    },
  );

  apiRoute(app, ctx, 'GET', '/me/linked-identities', account, async ({ realm, caller }) => {
    if (caller.kind !== 'user') throw problem.forbidden('only a user has linked identities');
    return { items: (await listLinkedIdentities(ctx.db, realm.id, caller.id)).map(presentLinkedIdentity) };
  });

  apiRoute<{ id: string }>(
    app,
    ctx,
    'DELETE',
    '/me/linked-identities/:id',
    account,
    async ({ req, reply, caller, call }) => {
      if (caller.kind !== 'user') throw problem.forbidden('only a user has linked identities');
      decodeNoBody(req.body);
      requireRecentAuth(ctx, caller, call.now);
      await unlinkIdentity(ctx.db, call, caller.id, req.params.id);
      return reply.code(204).send();
    },
  );

  apiRoute<{ user: string }>(app, ctx, 'POST', '/users/:user/merges', merge, async ({ req, reply, call }) => {
    const body = decodeBody(mergeBody, req.body ?? {});
    const merged = await mergeAccounts(ctx.db, call, userIdParam(req.params.user), body);
    return reply.code(201).send({
      id: merged.id,
      user_id: merged.userId,
      merged_user_id: merged.mergedUserId,
      moved_identity_ids: merged.movedIdentityIds,
    });
  });
}
