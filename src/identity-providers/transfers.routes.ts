// HTTP edge of federation transfers (spec doc 1, endpoints table "Federation transfers":
// realm.identity_providers.read for reads, .write for changes). Bodies are decoded before any
// lookup, so a bad body is 400/422 whatever the path names.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiDeps } from '../api/api.deps.ts';
import { apiRoute } from '../api/api-route.ts';
import { decodeNoBody } from '../platform/http/decode.ts';
import { cursorBinding, openCursor, pageBody, queryParams } from '../platform/http/keyset.ts';
import { problem } from '../platform/http/problem.ts';
import { OUTCOMES, type Outcome } from './transfer-analysis.ts';
import { decodeAddEntries, decodeCreateTransfer } from './transfers.decode.ts';
import type { EntryRow, TransferRow } from './transfers.repo.ts';
import { pageEntries } from './transfers.repo.ts';
import {
  addEntries,
  applyTransfer,
  approveTransfer,
  cancelTransfer,
  createTransfer,
  getTransfer,
  listTransferPage,
  transferEtag,
} from './transfers.service.ts';

const READ = { audience: 'admin', permissions: ['realm.identity_providers.read'] } as const;
const WRITE = { audience: 'admin', permissions: ['realm.identity_providers.write'] } as const;

const TRANSFER_ID = /^fxt_[0-9a-z]{26}$/;
const LIST_MAX = 200;
const ENTRIES_DEFAULT = 100;
const ENTRIES_MAX = 1000;

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
const actor = (type: string | null, id: string | null) => (type === null ? null : { type, id });

export const presentTransfer = (t: TransferRow) => ({
  id: t.id,
  source_provider_id: t.source_provider_id,
  target_provider_id: t.target_provider_id,
  mode: t.mode,
  target_tenant: t.target_tenant,
  reason: t.reason,
  state: t.state,
  summary: t.summary,
  created_by: actor(t.created_by_type, t.created_by_id),
  approved_by: actor(t.approved_by_type, t.approved_by_id),
  created_at: iso(t.created_at),
  updated_at: iso(t.updated_at),
  approved_at: iso(t.approved_at),
  applied_at: iso(t.applied_at),
  cancelled_at: iso(t.cancelled_at),
});

const presentEntry = (e: EntryRow) => ({
  seq: e.seq,
  source_subject: e.source_subject,
  source_issuer: e.source_issuer,
  target_subject: e.target_subject,
  target_tenant: e.target_tenant,
  outcome: e.outcome,
  linked_identity_id: e.link_id,
  target_issuer: e.target_issuer,
});

const ifMatch = (req: FastifyRequest): string | undefined => {
  const v = req.headers['if-match'];
  return Array.isArray(v) ? v.join(', ') : v;
};

function boundedInt(text: string | null, name: string, fallback: number, min: number, max: number): number {
  if (text === null) return fallback;
  if (!/^[0-9]{1,9}$/.test(text) || Number(text) < min)
    throw problem.invalidRequest(`${name} must be an integer of at least ${min}`);
  return Math.min(Number(text), max);
}

type Params = { transfer: string };
const BASE = '/federation-transfers';

export function registerTransferRoutes(app: FastifyInstance, ctx: ApiDeps): void {
  const { db } = ctx;
  const one = `${BASE}/:transfer`;

  apiRoute(app, ctx, 'POST', BASE, WRITE, async ({ req, reply, realm, call }) => {
    const input = decodeCreateTransfer(req.body);
    const t = await createTransfer(db, call, input);
    return reply
      .code(201)
      .header('etag', transferEtag(t.version))
      .header('location', `/api/v1/realms/${realm.name}${BASE}/${t.id}`)
      .send(presentTransfer(t));
  });

  apiRoute(app, ctx, 'GET', BASE, READ, async ({ req, realm }) => {
    const param = queryParams(req.query, []);
    const limit = boundedInt(
      param('limit'),
      'limit',
      Math.min(ctx.config.limits.defaultPageSize, LIST_MAX),
      1,
      LIST_MAX,
    );
    const binding = cursorBinding([realm.id, 'federation-transfers']);
    const before = openCursor(param('cursor'), binding, (id) => TRANSFER_ID.test(id));
    return pageBody(await listTransferPage(db, realm.id, before, limit), presentTransfer, binding);
  });

  apiRoute<Params>(app, ctx, 'GET', one, READ, async ({ req, reply, realm }) => {
    const t = await getTransfer(db, realm.id, req.params.transfer);
    return reply.header('etag', transferEtag(t.version)).send(presentTransfer(t));
  });

  apiRoute<Params>(app, ctx, 'GET', `${one}/entries`, READ, async ({ req, realm }) => {
    const query = (req.query ?? {}) as Record<string, unknown>;
    for (const name of Object.keys(query))
      if (!['outcome', 'after', 'limit'].includes(name))
        throw problem.invalidRequest(`unknown query parameter ${name.slice(0, 64)}`);
    const single = (name: string) => {
      const v = query[name];
      if (v === undefined || v === '') return null;
      if (typeof v !== 'string') throw problem.invalidRequest(`give ${name} once`);
      return v;
    };
    const outcome = single('outcome');
    if (outcome !== null && !(OUTCOMES as readonly string[]).includes(outcome))
      throw problem.invalidRequest('unknown outcome');
    const after = boundedInt(single('after'), 'after', 0, 0, 1_000_000_000);
    const limit = boundedInt(single('limit'), 'limit', ENTRIES_DEFAULT, 1, ENTRIES_MAX);
    const t = await getTransfer(db, realm.id, req.params.transfer);
    const rows = await pageEntries(db, realm.id, t.id, outcome as Outcome | null, after, limit);
    const items = rows.slice(0, limit);
    return {
      items: items.map(presentEntry),
      next_after: rows.length > limit ? (items.at(-1)?.seq ?? null) : null,
    };
  });

  apiRoute<Params>(app, ctx, 'POST', `${one}/entries`, WRITE, async ({ req, reply, call }) => {
    const entries = decodeAddEntries(req.body);
    const t = await addEntries(db, call, req.params.transfer, entries);
    return reply.header('etag', transferEtag(t.version)).send(presentTransfer(t));
  });

  apiRoute<Params>(app, ctx, 'POST', `${one}/approve`, WRITE, async ({ req, reply, call }) => {
    decodeNoBody(req.body);
    const t = await approveTransfer(db, call, req.params.transfer, ifMatch(req));
    return reply.header('etag', transferEtag(t.version)).send(presentTransfer(t));
  });

  apiRoute<Params>(app, ctx, 'POST', `${one}/apply`, WRITE, async ({ req, reply, call }) => {
    decodeNoBody(req.body);
    const t = await applyTransfer(db, call, req.params.transfer);
    return reply.header('etag', transferEtag(t.version)).send(presentTransfer(t));
  });

  apiRoute<Params>(app, ctx, 'POST', `${one}/cancel`, WRITE, async ({ req, reply, call }) => {
    decodeNoBody(req.body);
    await cancelTransfer(db, call, req.params.transfer);
    return reply.code(204).send();
  });
}
