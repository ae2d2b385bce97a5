// HTTP edge of support access under /api/v1/realms/{realm} (docs/support-access.md): the support
// side at /support-grants (admin audience) and the customer's side at /me/support-grants and
// /me/support-access (account audience).
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import type { ApiCaller } from '../api/api-auth.ts';
import { type ApiCall, apiRoute } from '../api/api-route.ts';
import {
  cursorBinding,
  cutPage,
  openCursor,
  pageBody,
  pageLimit,
  queryParams,
} from '../platform/http/keyset.ts';
import { problem } from '../platform/http/problem.ts';
import { findPreference, listGrantsOnAccount, listSupportGrants } from '../support-grants/index.ts';
import { presentGrant } from '../support-grants/support-grant.ts';
import { type CustomerCall, revokeAsCustomer, setSupportAccess } from './customer-support.service.ts';
import { decodeCreateGrant, decodePreference, decodeRevoke, grantIdParam } from './support-grants.decode.ts';
import {
  createSupportGrant,
  revokeAsSupport,
  type SupportCall,
  visibleGrant,
} from './support-grants.service.ts';
import { impersonationSettings } from './support-policy.ts';

const IMPERSONATE = 'support.impersonate';
/** What the customer's own list shows besides live grants. */
const RECENT_MS = 30 * 24 * 3600 * 1000;

type Routed = Pick<ApiCall<unknown>, 'call' | 'realm' | 'caller'>;

function personOf(caller: ApiCaller): string {
  // Support access is between people: a service principal neither gives nor receives it.
  if (caller.kind !== 'user') throw problem.forbidden('support access is for users');
  return caller.id;
}

export function registerSupportRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const admin = { audience: 'admin' } as const;
  const account = { audience: 'account' } as const;

  const supportCall = ({ call, realm, caller }: Routed): SupportCall => ({
    ...call,
    realmName: realm.name,
    actor: { type: 'user', id: personOf(caller) },
    supportStaff: caller.permissions.has(IMPERSONATE),
  });
  const customerCall = ({ call, caller }: Routed): CustomerCall => ({ ...call, userId: personOf(caller) });

  apiRoute(
    app,
    ctx,
    'POST',
    '/support-grants',
    { ...admin, permissions: [IMPERSONATE], recentAuth: true },
    async (c) => {
      const { req, reply } = c;
      const call = supportCall(c);
      const input = decodeCreateGrant(req.body);
      const created = await createSupportGrant(ctx, call, input);
      // The handoff code is shown here once; only its digest is kept.
      return reply
        .code(201)
        .send({ ...presentGrant(created.grant, call.now), handoff_code: created.handoffCode });
    },
  );

  // Support staff see every grant (filters: actor_user_id, target_user_id); anyone else their own.
  apiRoute(app, ctx, 'GET', '/support-grants', admin, async (c) => {
    const { req, realm } = c;
    const call = supportCall(c);
    const param = queryParams(req.query, ['actor_user_id', 'target_user_id']);
    const limit = pageLimit(param('limit'), ctx.config.limits);
    const actorFilter = param('actor_user_id');
    const targetFilter = param('target_user_id');
    const actorUserId = call.supportStaff ? actorFilter : call.actor.id;
    const binding = cursorBinding([
      realm.id,
      'GET /support-grants',
      call.actor.id,
      actorFilter,
      targetFilter,
    ]);
    const after = openCursor(param('cursor'), binding, (id) => /^sgr_[0-9a-z]{26}$/.test(id));
    const rows = await listSupportGrants(ctx.db, realm.id, {
      ...(actorUserId !== null ? { actorUserId } : {}),
      ...(targetFilter !== null ? { targetUserId: targetFilter } : {}),
      after,
      limit,
    });
    return pageBody(cutPage(rows, limit), (g) => presentGrant(g, call.now), binding);
  });

  apiRoute<{ id: string }>(app, ctx, 'GET', '/support-grants/:id', admin, async (c) => {
    const { req } = c;
    const call = supportCall(c);
    return presentGrant(await visibleGrant(ctx, call, grantIdParam(req.params.id)), call.now);
  });

  apiRoute<{ id: string }>(app, ctx, 'POST', '/support-grants/:id/revoke', admin, async (c) => {
    const { req } = c;
    const call = supportCall(c);
    const id = grantIdParam(req.params.id);
    const input = decodeRevoke(req.body);
    return presentGrant(await revokeAsSupport(ctx, call, id, input.reason), call.now);
  });

  apiRoute(app, ctx, 'GET', '/me/support-grants', account, async (c) => {
    const { realm } = c;
    const call = customerCall(c);
    const rows = await listGrantsOnAccount(
      ctx.db,
      realm.id,
      call.userId,
      new Date(call.now.getTime() - RECENT_MS),
    );
    return { items: rows.map((g) => presentGrant(g, call.now)) };
  });

  apiRoute<{ id: string }>(app, ctx, 'POST', '/me/support-grants/:id/revoke', account, async (c) => {
    const { req } = c;
    const call = customerCall(c);
    decodeRevoke(req.body);
    return presentGrant(await revokeAsCustomer(ctx, call, grantIdParam(req.params.id)), call.now);
  });

  apiRoute(app, ctx, 'GET', '/me/support-access', account, async (c) => {
    const { realm } = c;
    const call = customerCall(c);
    const settings = await impersonationSettings(ctx.db, realm.id);
    const stored = await findPreference(ctx.db, realm.id, call.userId);
    return {
      allowed: !settings.allowCustomerOptOut || stored !== false,
      opt_out_allowed: settings.allowCustomerOptOut,
    };
  });

  apiRoute(app, ctx, 'PUT', '/me/support-access', account, async (c) => {
    const { req } = c;
    const call = customerCall(c);
    const input = decodePreference(req.body);
    return setSupportAccess(ctx, call, input.allowed);
  });
}
