// Listeners over a context the test builds itself, for situations the harness does not stage: a
// database that is down or never answers, and the real startHttpServers with its drain.
import { createServer, type Server, type Socket } from 'node:net';
import type { TestContext } from 'node:test';
import { type AppContext, createContext } from '../../../src/main/context.ts';
import { buildInternalApp, buildPublicApp } from '../../../src/main/http-server.ts';
import type { Clock } from '../../../src/platform/clock.ts';
import type { Db } from '../../../src/platform/db/db.ts';
import { openPostgres } from '../../../src/platform/db/pg.ts';
import { createLogger } from '../../../src/platform/log.ts';
import { testConfig } from '../../harness/harness.ts';

export interface Listeners {
  ctx: AppContext;
  publicUrl: string;
  internalUrl: string;
}

export async function contextOver(
  db: Db,
  opts: { overrides?: Record<string, unknown>; env?: NodeJS.ProcessEnv; clock?: Clock } = {},
): Promise<AppContext> {
  return createContext(testConfig(opts.overrides, opts.env), {
    db,
    env: opts.env ?? {},
    log: createLogger('silent'),
    ...(opts.clock ? { clock: opts.clock } : {}),
  });
}

/** Public and internal apps of `ctx` on ephemeral ports, closed after the test. */
export async function listen(t: TestContext, ctx: AppContext): Promise<Listeners> {
  const publicApp = buildPublicApp(ctx);
  const internalApp = buildInternalApp(ctx);
  await publicApp.listen({ host: '127.0.0.1', port: 0 });
  await internalApp.listen({ host: '127.0.0.1', port: 0 });
  t.after(async () => {
    await Promise.all([publicApp.close(), internalApp.close()]);
  });
  const url = (s: typeof publicApp.server): string => {
    const a = s.address();
    if (!a || typeof a === 'string') throw new Error('not listening');
    return `http://127.0.0.1:${a.port}`;
  };
  return { ctx, publicUrl: url(publicApp.server), internalUrl: url(internalApp.server) };
}

/** A pool whose every connection attempt is refused at once (nothing listens on port 1). */
export function refusedDatabase(t: TestContext): Db {
  const db = openPostgres({
    url: 'postgres://postgres@127.0.0.1:1/none',
    maxConns: 2,
    statementTimeoutMs: 1000,
  });
  t.after(() => db.close().catch(() => {}));
  return db;
}

/**
 * A TCP server that accepts connections and never says a word, and a pool pointing at it: every
 * query waits until something gives up.
 */
export async function silentDatabase(t: TestContext): Promise<Db> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const db = openPostgres({
    url: `postgres://postgres@127.0.0.1:${port}/none`,
    maxConns: 2,
    statementTimeoutMs: 1000,
  });
  t.after(async () => {
    for (const s of sockets) s.destroy();
    await new Promise((r) => server.close(r));
    await db.close().catch(() => {});
  });
  return db;
}

/** A clock `offsetMs` away from the system clock. */
export const skewedClock = (offsetMs: number): Clock => ({ now: () => new Date(Date.now() + offsetMs) });
