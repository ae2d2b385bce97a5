// The account's own sessions under /api/v1/realms/{realm}/me/sessions (spec doc 1, Self-service
// table: list, end one, end all). Ending sessions stays allowed to recovery-restricted sessions
// (doc 1, Errors, case rule 1: the route option allowedWhileRestricted).
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import type { ApiCaller } from '../api/api-auth.ts';
import { apiRoute } from '../api/api-route.ts';
import { recordAudit } from '../audit/index.ts';
import { addEvent } from '../events/index.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { sessionIdParam } from '../users/users.decode.ts';
import { endAccountSessions } from './account-revocation.ts';
import { revokeSession } from './grants.repo.ts';
import { listLiveSessions, lockLiveSession, type SessionRow } from './sessions.repo.ts';

const iso = (d: Date | string): string => new Date(d).toISOString();

function presentSession(s: SessionRow, currentId: string | null) {
  return {
    id: s.id,
    created_at: iso(s.created_at),
    last_seen_at: iso(s.last_seen_at),
    auth_time: iso(s.auth_time),
    amr: s.amr,
    acr: s.acr,
    remember_me: s.remember_me,
    transient: s.transient,
    current: s.id === currentId,
    user_agent: s.user_agent,
    client_id: s.client_id,
  };
}

/** Self-service is for people; a service principal has no sessions to manage. */
function ownerOf(caller: ApiCaller): string {
  if (caller.kind !== 'user') throw problem.forbidden('only a user has sessions');
  return caller.id;
}

export function registerMeSessionRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const account = { audience: 'account' } as const;
  const ending = { audience: 'account', allowedWhileRestricted: true } as const;

  apiRoute(app, ctx, 'GET', '/me/sessions', account, async ({ realm, caller }) => {
    const sessions = await listLiveSessions(ctx.db, realm.id, ownerOf(caller), ctx.clock.now());
    return { items: sessions.map((s) => presentSession(s, caller.sessionId)) };
  });

  apiRoute<{ id: string }>(
    app,
    ctx,
    'DELETE',
    '/me/sessions/:id',
    ending,
    async ({ req, reply, realm, caller, call }) => {
      const userId = ownerOf(caller);
      const sessionId = sessionIdParam(req.params.id);
      const { now, correlationId } = call;
      await ctx.db.tx(async (tx) => {
        // Another account's session id is as unknown as one that never existed.
        if (!(await lockLiveSession(tx, realm.id, userId, sessionId, now)))
          throw problem.notFound('no such session');
        await revokeSession(tx, realm.id, sessionId, 'user_logout', now);
        const actor = { type: 'user', id: userId } as const;
        await recordAudit(
          tx,
          {
            realmId: realm.id,
            type: 'session.revoked',
            category: 'security',
            actor,
            subject: actor,
            target: { type: 'session', id: sessionId },
            correlationId,
            reason: 'user_logout',
            data: { current: sessionId === caller.sessionId },
          },
          now,
        );
        await addEvent(tx, {
          realmId: realm.id,
          type: 'session.revoked',
          occurredAt: now,
          correlationId,
          data: { user_id: userId, session_id: sessionId, reason: 'user_logout' },
        });
      });
      return reply.code(204).send();
    },
  );

  // Logout everywhere: the account-wide revocation of doc 2, Revocation exposure, which also ends
  // the token this request came with.
  apiRoute(app, ctx, 'POST', '/me/sessions/revoke-all', ending, async ({ req, realm, caller, call }) => {
    const userId = ownerOf(caller);
    decodeNoBody(req.body);
    const { now, correlationId } = call;
    const revoked = await ctx.db.tx(async (tx) => {
      const r = await endAccountSessions(tx, realm.id, userId, 'logout_everywhere', now, correlationId);
      const actor = { type: 'user', id: userId } as const;
      await recordAudit(
        tx,
        {
          realmId: realm.id,
          type: 'user.sessions_revoked',
          category: 'security',
          actor,
          subject: actor,
          correlationId,
          reason: 'logout_everywhere',
          data: {
            sessions_revoked: r.sessions.length,
            grants_revoked: r.grants,
            support_grants_revoked: r.supportGrants,
          },
        },
        now,
      );
      return r;
    });
    return { sessions_revoked: revoked.sessions.length, grants_revoked: revoked.grants };
  });
}
