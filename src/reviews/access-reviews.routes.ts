// The access review API under /api/v1/realms/{realm} (docs/access-reviews.md): campaigns are
// managed with realm.access_reviews.manage; their named reviewers read them and decide items with
// an administration-audience token and no permission of their own.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import type { ApiCaller } from '../api/api-auth.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeBody, decodeNoBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { iso } from '../roles/admin-call.ts';
import { decodePageQuery, pageOf } from '../roles/list-query.ts';
import { idParam } from '../roles/roles.decode.ts';
import { decodeDecision, decodeNewReview } from './access-reviews.decode.ts';
import { type ItemRow, listItems, listReviews, type ReviewRow } from './access-reviews.repo.ts';
import { createReview, decideItem, readableReview, requestClose } from './access-reviews.service.ts';

const MANAGE = 'realm.access_reviews.manage';
const MANAGER = { audience: 'admin', permissions: [MANAGE] } as const;
// Reviewers need no permission: being named in the campaign is what lets them in.
const ANY_ADMIN = { audience: 'admin', permissions: [] } as const;

const presentReview = (r: ReviewRow) => ({
  id: r.id,
  name: r.name,
  scope: { type: r.scope_type, id: r.scope_id },
  reviewer_ids: r.reviewer_ids,
  default_decision: r.default_decision,
  state: r.state,
  ends_at: iso(r.ends_at),
  items: r.items,
  decided: r.decided,
  created_by: { type: r.created_by_type, id: r.created_by_id },
  created_at: iso(r.created_at),
  closed_at: iso(r.closed_at),
  result: r.result,
});

const presentItem = (i: ItemRow) => ({
  id: i.target_id,
  user_id: i.user_id,
  decision: i.decision,
  decided_by: i.decided_by,
  decided_at: iso(i.decided_at),
  reason: i.reason,
  outcome: i.outcome,
});

const reviewParam = (raw: string) => idParam('arv', raw, 'access review');
// An item is named by the assignment or membership it reviews.
function itemParam(raw: string): string {
  if (!/^(ras|mem)_[0-9a-z]{26}$/.test(raw)) throw problem.notFound('no such item in this access review');
  return raw;
}
const readerOf = (caller: ApiCaller) => ({ id: caller.id, manages: caller.permissions.has(MANAGE) });

type P = { id: string };

export function registerAccessReviewRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  apiRoute(app, ctx, 'POST', '/access-reviews', MANAGER, async ({ req, reply, call }) => {
    const r = await createReview(ctx.db, call, decodeBody(decodeNewReview, req.body));
    return reply.code(201).send(presentReview(r));
  });

  apiRoute(app, ctx, 'GET', '/access-reviews', MANAGER, async ({ req, realm }) => {
    const q = decodePageQuery(req.query, ctx.config.limits, `${realm.id}:GET /access-reviews`, []);
    return pageOf(await listReviews(ctx.db, realm.id, q), q, presentReview);
  });

  apiRoute<P>(app, ctx, 'GET', '/access-reviews/:id', ANY_ADMIN, async ({ req, realm, caller }) =>
    presentReview(await readableReview(ctx.db, realm.id, reviewParam(req.params.id), readerOf(caller))),
  );

  apiRoute<P>(app, ctx, 'GET', '/access-reviews/:id/items', ANY_ADMIN, async ({ req, realm, caller }) => {
    const r = await readableReview(ctx.db, realm.id, reviewParam(req.params.id), readerOf(caller));
    const q = decodePageQuery(
      req.query,
      ctx.config.limits,
      `${realm.id}:GET /access-reviews/${r.id}/items`,
      [],
    );
    return pageOf(await listItems(ctx.db, realm.id, r.id, q), q, presentItem);
  });

  apiRoute<P & { item: string }>(
    app,
    ctx,
    'PUT',
    '/access-reviews/:id/items/:item/decision',
    ANY_ADMIN,
    async ({ req, reply, call }) => {
      const d = decodeBody(decodeDecision, req.body);
      await decideItem(ctx.db, call, reviewParam(req.params.id), itemParam(req.params.item), {
        decision: d.decision,
        reason: d.reason ?? null,
      });
      return reply.code(204).send();
    },
  );

  apiRoute<P>(app, ctx, 'POST', '/access-reviews/:id/close', MANAGER, async ({ req, reply, call }) => {
    decodeNoBody(req.body);
    const r = await requestClose(ctx.db, call, reviewParam(req.params.id));
    return reply.code(202).send(presentReview(r));
  });
}
