// The audit API under /api/v1/realms/{realm} (spec doc 2, Audit endpoints; docs/audit.md): read
// events, legal holds, corrections and application activity.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { decodePageQuery, pageOf } from '../roles/list-query.ts';
import {
  AUDIT_EVENT_FILTERS,
  auditEventFilters,
  decodeActivity,
  decodeCorrection,
  decodeLegalHold,
} from './audit.decode.ts';
import { presentAuditEvent, presentLegalHold } from './audit.present.ts';
import { correctAuditEvent, placeLegalHold, releaseHold, reportActivity } from './audit-admin.service.ts';
import { listAuditEvents } from './audit-events.repo.ts';
import { listLegalHolds } from './legal-holds.repo.ts';

/** GET /audit-legal-holds answers at most this many (spec doc 2, Audit endpoints). */
export const LEGAL_HOLD_LIST_MAX = 500;

const auditId = (raw: string): string => {
  if (!/^aud_[0-9a-z]{26}$/.test(raw)) throw problem.notFound('no such audit event');
  return raw;
};
const holdId = (raw: string): string => {
  if (!/^alh_[0-9a-z]{26}$/.test(raw)) throw problem.notFound('no such legal hold');
  return raw;
};

export function registerAuditRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  // Reading evidence is as sensitive as exporting it: realm.audit.export (docs/decisions.md).
  apiRoute(
    app,
    ctx,
    'GET',
    '/audit-events',
    { audience: 'admin', permissions: ['realm.audit.export'] },
    async ({ req, call }) => {
      const q = decodePageQuery(
        req.query,
        ctx.config.limits,
        `${call.realmId}/audit-events`,
        AUDIT_EVENT_FILTERS,
      );
      const filters = auditEventFilters(q.filters);
      const rows = await listAuditEvents(ctx.db, call.realmId, filters, q.after, q.limit + 1);
      return pageOf(rows, q, presentAuditEvent);
    },
  );

  apiRoute(
    app,
    ctx,
    'POST',
    '/audit-legal-holds',
    { audience: 'admin', permissions: ['realm.audit.legal_hold'] },
    async ({ req, reply, call }) => {
      const body = decodeLegalHold(req.body);
      const hold = await placeLegalHold(ctx.db, call, {
        reason: body.reason,
        organizationId: body.organizationId ?? null,
        subjectId: body.subjectId ?? null,
      });
      return reply.code(201).send(presentLegalHold(hold));
    },
  );

  apiRoute(
    app,
    ctx,
    'GET',
    '/audit-legal-holds',
    { audience: 'admin', permissions: ['realm.audit.legal_hold'] },
    async ({ call }) => {
      const rows = (await listLegalHolds(ctx.db, call.realmId, LEGAL_HOLD_LIST_MAX)).rows;
      return { items: rows.map(presentLegalHold) };
    },
  );

  apiRoute<{ id: string }>(
    app,
    ctx,
    'POST',
    '/audit-legal-holds/:id/release',
    { audience: 'admin', permissions: ['realm.audit.legal_hold'] },
    async ({ req, call }) => {
      decodeNoBody(req.body);
      return presentLegalHold(await releaseHold(ctx.db, call, holdId(req.params.id)));
    },
  );

  apiRoute<{ id: string }>(
    app,
    ctx,
    'POST',
    '/audit-events/:id/corrections',
    { audience: 'admin', permissions: ['realm.audit.correct'] },
    async ({ req, reply, call }) => {
      const id = auditId(req.params.id);
      const body = decodeCorrection(req.body);
      const answer = await correctAuditEvent(ctx.db, call, id, {
        reason: body.reason,
        correction: body.correction,
      });
      return reply.code(201).send(answer);
    },
  );

  // Any administration caller may report its application's activity; it is recorded under the
  // caller as actor, with its own type so it never passes for the service's evidence.
  apiRoute(app, ctx, 'POST', '/activity-events', { audience: 'admin' }, async ({ req, reply, call }) => {
    const body = decodeActivity(req.body);
    const { id } = await reportActivity(ctx.db, call, {
      activity: body.activity,
      outcome: body.outcome ?? 'success',
      subjectId: body.subjectId ?? null,
      targetId: body.targetId ?? null,
      organizationId: body.organizationId ?? null,
      data: (body.data ?? {}) as Record<string, unknown>,
    });
    return reply.code(201).send({ id });
  });
}
