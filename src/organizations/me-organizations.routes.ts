// The signed-in user's side of invitations and join requests, under /api/v1/realms/{realm}/me
// (account audience; docs/api-organizations.md). Another user's request is not found.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import type { ApiCaller } from '../api/api-auth.ts';
import { apiRoute } from '../api/api-route.ts';
import { orgCall } from '../api/org-call.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { acceptInvitation, declineInvitation, listMyInvitations } from './invitations.service.ts';
import { fileJoinRequest, listMyJoinRequests, withdrawJoinRequest } from './join-requests.service.ts';
import { decodeJoinRequest, invitationParam, joinRequestParam } from './organizations.decode.ts';
import { presentInvitation, presentJoinRequest, presentMembership } from './organizations.present.ts';
import type { RequestRow } from './organizations.types.ts';

const account = { audience: 'account' } as const;
type IdParams = { id: string };

function userOf(caller: ApiCaller): string {
  if (caller.kind !== 'user') throw problem.forbidden('only a user has invitations and join requests');
  return caller.id;
}

/** A request listed to its user names the organization it is about. */
const withOrganization =
  <T>(present: (r: RequestRow, now: Date) => T, now: Date) =>
  (r: RequestRow & { org_slug: string; org_display_name: string }) => ({
    ...present(r, now),
    organization: { id: r.organization_id, slug: r.org_slug, display_name: r.org_display_name },
  });

export function registerMyOrganizationRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  apiRoute(app, ctx, 'GET', '/me/invitations', account, async ({ realm, caller }) => {
    const now = ctx.clock.now();
    const rows = await listMyInvitations(ctx.db, realm.id, userOf(caller), now);
    return { items: rows.map(withOrganization(presentInvitation, now)) };
  });

  apiRoute<IdParams>(
    app,
    ctx,
    'POST',
    '/me/invitations/:id/accept',
    account,
    async ({ req, caller, call }) => {
      userOf(caller);
      const id = invitationParam(req.params.id);
      decodeNoBody(req.body);
      return presentMembership(await acceptInvitation(ctx.db, orgCall(call, caller), id));
    },
  );

  apiRoute<IdParams>(
    app,
    ctx,
    'POST',
    '/me/invitations/:id/decline',
    account,
    async ({ req, caller, call }) => {
      userOf(caller);
      decodeNoBody(req.body);
      return presentInvitation(
        await declineInvitation(ctx.db, orgCall(call, caller), invitationParam(req.params.id)),
        call.now,
      );
    },
  );

  apiRoute(app, ctx, 'GET', '/me/join-requests', account, async ({ realm, caller }) => {
    const now = ctx.clock.now();
    const rows = await listMyJoinRequests(ctx.db, realm.id, userOf(caller), now);
    return { items: rows.map(withOrganization(presentJoinRequest, now)) };
  });

  apiRoute(app, ctx, 'POST', '/me/join-requests', account, async ({ req, reply, caller, call }) => {
    userOf(caller);
    const orgId = decodeJoinRequest(req.body);
    return reply
      .code(201)
      .send(presentJoinRequest(await fileJoinRequest(ctx.db, orgCall(call, caller), orgId), call.now));
  });

  apiRoute<IdParams>(
    app,
    ctx,
    'POST',
    '/me/join-requests/:id/withdraw',
    account,
    async ({ req, caller, call }) => {
      userOf(caller);
      decodeNoBody(req.body);
      return presentJoinRequest(
        await withdrawJoinRequest(ctx.db, orgCall(call, caller), joinRequestParam(req.params.id)),
        call.now,
      );
    },
  );
}
