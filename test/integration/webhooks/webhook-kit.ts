// Shared setup of the webhook tests: a real HTTP receiver on loopback, reached through a fixed
// resolver table and the operator allowlist (127.0.0.1/32), an administrator, events written to
// the outbox as an operation would, and the worker's dispatch and delivery run on demand.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import type { EventData, EventType } from '../../../src/events/catalog.ts';
import { addEvent, dispatchOutboxTo } from '../../../src/events/index.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import type { Resolver } from '../../../src/platform/net/outbound-http.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { deliverDue, fanOutToWebhooks, type WebhookDeliveryDeps } from '../../../src/webhooks/index.ts';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';

export type Json = Record<string, unknown>;

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  url: string;
}

export interface Receiver {
  port: number;
  received: Received[];
  /** How the receiver answers; 204 by default. */
  answer: (req: IncomingMessage, res: ServerResponse, body: string) => void;
  url(path?: string): string;
}

export async function startReceiver(t: TestContext): Promise<Receiver> {
  const r: Receiver = {
    port: 0,
    received: [],
    answer: (_req, res) => {
      res.statusCode = 204;
      res.end();
    },
    url: (path = '/hook') => `http://receiver.test:${r.port}${path}`,
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      r.received.push({ headers: req.headers, body, url: req.url ?? '' });
      r.answer(req, res, body);
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  r.port = (server.address() as AddressInfo).port;
  t.after(async () => {
    server.closeAllConnections();
    await new Promise((ok) => server.close(ok));
  });
  return r;
}

/** Host names the tests use; a test may point one elsewhere (a later, private resolution). */
export interface ResolverHold {
  /** While set, every resolution waits for it (a slow DNS answer during validation). */
  until: Promise<void> | null;
  /** Called when a resolution starts waiting. */
  waiting?: () => void;
}

export function resolverTable(): { table: Record<string, string[]>; resolver: Resolver; hold: ResolverHold } {
  const hold: ResolverHold = { until: null };
  const table: Record<string, string[]> = {
    'receiver.test': ['127.0.0.1'],
    'public.test': ['93.184.216.34'],
    'private.test': ['10.1.2.3'],
    'nat64.test': ['64:ff9b::7f00:1'],
  };
  const resolver: Resolver = async (host) => {
    if (hold.until) {
      hold.waiting?.();
      await hold.until;
    }
    const list = table[host];
    if (!list) throw Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' });
    return list.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return { table, resolver, hold };
}

export interface WebhookSetup {
  h: Harness;
  realm: RealmRow;
  admin: ApiCallerKit;
  receiver: Receiver;
  table: Record<string, string[]>;
  hold: ResolverHold;
  outcomes: string[];
  deps: WebhookDeliveryDeps;
}

export async function setup(t: TestContext, overrides: Record<string, unknown> = {}): Promise<WebhookSetup> {
  const { table, resolver, hold } = resolverTable();
  const h = await startHarness(t, {
    resolver,
    overrides: { 'delivery.egress_allowlist': '127.0.0.1/32', ...overrides },
  });
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  const receiver = await startReceiver(t);
  // The events of the administrator's sign-in go out before any subscription exists.
  await dispatchOutboxTo(h.ctx, h.clock.now(), [fanOutToWebhooks]);
  // Tests share this file's database: no delivery of this realm may reach a later test's worker.
  t.after(async () => {
    await h.ctx.db.query('delete from webhook_deliveries where realm_id = $1', [realm.id]);
  });
  const outcomes: string[] = [];
  const deps: WebhookDeliveryDeps = {
    ...workerDeps(h.ctx),
    deliveryEnded: (o) => {
      outcomes.push(o);
    },
  };
  return { h, realm, admin, receiver, table, hold, outcomes, deps };
}

export async function json(res: Response): Promise<Json> {
  return (await res.json()) as Json;
}

export async function subscribe(s: WebhookSetup, body: Json = {}): Promise<Json> {
  const res = await s.admin.call('POST', '/webhooks', {
    name: 'test receiver',
    destination_url: s.receiver.url(),
    event_types: ['user.created'],
    allow_private_network: true,
    ...body,
  });
  const out = await json(res);
  if (res.status !== 201) throw new Error(`subscribe: ${res.status} ${JSON.stringify(out)}`);
  return out;
}

export async function emit<T extends EventType>(
  s: WebhookSetup,
  type: T,
  data: EventData[T],
  extra: { orgId?: string; correlationId?: string; realmId?: string } = {},
): Promise<string> {
  const { realmId, ...rest } = extra;
  return s.h.ctx.db.tx((tx) =>
    addEvent(tx, { realmId: realmId ?? s.realm.id, type, data, occurredAt: s.h.clock.now(), ...rest }),
  );
}

/** outbox.dispatch as the worker runs it. */
export const dispatch = (s: WebhookSetup) => dispatchOutboxTo(s.h.ctx, s.h.clock.now(), [fanOutToWebhooks]);

/** One webhooks.deliver run of the worker named `holder`. */
export const deliver = (s: WebhookSetup, holder = 'worker-a') => deliverDue(s.deps, holder, s.h.clock.now());

export async function deliveriesOf(s: WebhookSetup, subscriptionId: string) {
  return (
    await s.h.ctx.db.query<{
      id: string;
      event_id: string;
      state: string;
      attempts: number;
      next_attempt_at: Date;
      last_status: number | null;
      last_category: string | null;
      body: string;
    }>('select * from webhook_deliveries where realm_id = $1 and subscription_id = $2 order by id', [
      s.realm.id,
      subscriptionId,
    ])
  ).rows;
}
