// GET /api/v1/realms/{realm}/session-events (document 1, realm API table; docs/resource-servers.md):
// the revocation stream bounded-state verifiers replay. An admin-audience token holding
// realm.session_events.read reads it; `wait` turns an empty read into a long poll.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { NotificationHub } from '../platform/db/notification-hub.ts';
import { makeCursor } from '../platform/http/keyset.ts';
import { readStream, SESSION_EVENTS_CHANNEL } from './session-event-stream.ts';
import { decodeStreamQuery, streamBinding } from './session-events.decode.ts';
import type { SessionEventRow } from './session-events.repo.ts';

/** Members holding times are written as the rest of the API writes them (ISO 8601, UTC). */
const TIME_MEMBERS = new Set(['revoked_before', 'expires_at']);

function presentEvent(row: SessionEventRow) {
  const data = (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as Record<string, unknown>;
  const members = Object.entries(data).map(([k, v]) =>
    TIME_MEMBERS.has(k) && typeof v === 'string' ? [k, new Date(v).toISOString()] : [k, v],
  );
  return {
    id: row.seq,
    type: row.type,
    occurred_at: new Date(row.created_at).toISOString(),
    ...Object.fromEntries(members),
  };
}

/** Long polls end this long before limits.request_timeout, so they answer before being cut off. */
const TIMEOUT_MARGIN_MS = 2000;

export function registerSessionEventRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const hub = new NotificationHub(ctx.db, SESSION_EVENTS_CHANNEL);
  // Waiting requests answer at once when the server stops, so shutdown never waits out a poll.
  app.addHook('preClose', async () => hub.close());
  const reader = { audience: 'admin', permissions: ['realm.session_events.read'] } as const;
  const maxWaitMs = Math.max(0, ctx.config.limits.requestTimeoutMs - TIMEOUT_MARGIN_MS);

  apiRoute(app, ctx, 'GET', '/session-events', reader, async ({ req, reply, realm }) => {
    const query = decodeStreamQuery(req.query, realm.id);
    const gone = new AbortController();
    const onClose = () => gone.abort();
    reply.raw.once('close', onClose);
    try {
      const waitMs = Math.min(query.waitSeconds * 1000, maxWaitMs);
      const page = await readStream({ db: ctx.db, hub }, realm.id, query.after, waitMs, gone.signal);
      reply.header('cache-control', 'no-store');
      return {
        events: page.rows.map(presentEvent),
        next_cursor: makeCursor(page.position, streamBinding(realm.id)),
      };
    } finally {
      reply.raw.off('close', onClose);
    }
  });
}
