// Maintenance mode (spec doc 2, Operator status object `maintenance`; Errors 503; docs/operations.md,
// Maintenance mode). An operator sets it with `identity-cli maintenance`; every server process
// reads it through a short cache and, on the public listener:
//
//   off        serves everything
//   read_only  refuses requests that change state (503); reads, introspection and UserInfo go on
//   closed     refuses everything (503)
//   debug      serves everything and logs at debug level until debug_until, then counts as off
//
// Health paths, the key set and discovery are always served, so readiness probes and offline
// token verifiers keep working. A refusal carries Retry-After when the mode names a wait.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { recordAudit } from '../audit/index.ts';
import type { Actor } from '../kernel/call.ts';
import type { Clock } from '../platform/clock.ts';
import type { Db } from '../platform/db/db.ts';
import { Problem, problemBody } from '../platform/http/problem.ts';
import { PROBLEM_CONTENT_TYPE } from '../platform/http/problem-mapper.ts';
import type { Logger } from '../platform/log.ts';
import {
  MAINTENANCE_OFF,
  type MaintenanceState,
  readMaintenance,
  writeMaintenance,
} from './maintenance.repo.ts';

export { MAINTENANCE_MODES, type MaintenanceMode, readMaintenance } from './maintenance.repo.ts';

export const MAINTENANCE_CACHE_MS = 2000;

/** The mode in force: a debug window that has ended is off. */
export function effectiveMode(s: MaintenanceState, now: Date): MaintenanceState['mode'] {
  if (s.mode === 'debug' && (s.debugUntil === null || s.debugUntil.getTime() <= now.getTime())) return 'off';
  return s.mode;
}

/** The `maintenance` member of GET /status. */
export function presentMaintenance(s: MaintenanceState, now: Date) {
  const iso = (d: Date | null) => (d === null ? null : d.toISOString());
  return {
    mode: effectiveMode(s, now),
    message: s.message,
    retry_after_seconds: s.retryAfterSeconds,
    updated_at: iso(s.updatedAt),
    updated_by: s.updatedBy,
    debug_until: iso(s.debugUntil),
    debug_component: s.debugComponent,
  };
}

const ALWAYS_SERVED = [/^\/health\//, /^\/realms\/[^/]+\/jwks$/, /^\/realms\/[^/]+\/\.well-known\//];
// POST requests that only read: RFC 7662 introspection and OpenID Connect UserInfo.
const READING_POSTS = [/^\/realms\/[^/]+\/oauth\/(introspect|userinfo)$/];
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Whether the mode refuses this request (pure: the rule the hook applies). */
export function refuses(mode: MaintenanceState['mode'], method: string, path: string): boolean {
  if (mode === 'off' || mode === 'debug') return false;
  if (ALWAYS_SERVED.some((re) => re.test(path))) return false;
  if (mode === 'closed') return true;
  if (SAFE_METHODS.has(method)) return false;
  return !READING_POSTS.some((re) => re.test(path));
}

export class MaintenanceGate {
  private cached: { until: number; state: MaintenanceState } | null = null;
  private readonly db: Db;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly configuredLevel: string;

  constructor(db: Db, clock: Clock, log: Logger) {
    this.db = db;
    this.clock = clock;
    this.log = log;
    this.configuredLevel = log.level;
  }

  /** The state while the cached one is fresh, without waiting: the gate asks on every request. */
  fresh(): MaintenanceState | null {
    return this.cached && this.cached.until > this.clock.now().getTime() ? this.cached.state : null;
  }

  /** The current state; a database that does not answer leaves the last one known (or off) in force. */
  async current(): Promise<MaintenanceState> {
    const now = this.clock.now().getTime();
    if (this.cached && this.cached.until > now) return this.cached.state;
    let state: MaintenanceState;
    try {
      state = await readMaintenance(this.db);
    } catch {
      state = this.cached?.state ?? MAINTENANCE_OFF;
    }
    this.cached = { until: now + MAINTENANCE_CACHE_MS, state };
    this.applyLogLevel(state);
    return state;
  }

  forget(): void {
    this.cached = null;
  }

  // A debug window lowers the process's log level to debug and gives it back when it ends; a
  // silenced logger stays silent.
  private applyLogLevel(state: MaintenanceState): void {
    const debugging = effectiveMode(state, this.clock.now()) === 'debug';
    const lowers =
      this.configuredLevel !== 'silent' &&
      this.log.levels.values[this.configuredLevel] !== undefined &&
      (this.log.levels.values[this.configuredLevel] as number) > (this.log.levels.values.debug as number);
    const wanted = debugging && lowers ? 'debug' : this.configuredLevel;
    if (this.log.level !== wanted) this.log.level = wanted;
  }
}

function refuse(req: FastifyRequest, reply: FastifyReply, s: MaintenanceState): FastifyReply {
  const detail = s.message ?? 'the service is under maintenance';
  if (s.retryAfterSeconds !== null) reply.header('retry-after', String(s.retryAfterSeconds));
  reply.code(503).header('cache-control', 'no-store');
  // The OAuth endpoints answer in their own error format (RFC 6749 section 5.2).
  if (/^\/realms\/[^/]+\/oauth\//.test(req.url.split('?')[0] ?? ''))
    return reply
      .type('application/json')
      .send({ error: 'temporarily_unavailable', error_description: detail });
  return reply
    .type(PROBLEM_CONTENT_TYPE)
    .send(problemBody(new Problem(503, 'temporarily_unavailable', detail), req.url.split('?')[0]));
}

export function registerMaintenanceGate(app: FastifyInstance, gate: MaintenanceGate, clock: Clock): void {
  const judge = (req: FastifyRequest, reply: FastifyReply, state: MaintenanceState): boolean => {
    const path = req.url.split('?')[0] ?? '';
    if (!refuses(effectiveMode(state, clock.now()), req.method, path)) return false;
    refuse(req, reply, state);
    return true;
  };
  // Callback form with a synchronous path while the state is cached: this runs on every request.
  app.addHook('onRequest', (req, reply, done) => {
    const cached = gate.fresh();
    if (cached) {
      if (!judge(req, reply, cached)) done();
      return;
    }
    gate.current().then((state) => {
      if (!judge(req, reply, state)) done();
    }, done);
  });
}

export interface MaintenanceChange {
  mode: MaintenanceState['mode'];
  message: string | null;
  retryAfterSeconds: number | null;
  debugUntil: Date | null;
  debugComponent: string | null;
}

/**
 * Sets the mode for the whole deployment, with an audit record (category operations, no realm) in
 * the same transaction. Processes follow within MAINTENANCE_CACHE_MS.
 */
export async function setMaintenance(
  db: Db,
  change: MaintenanceChange,
  actor: Actor,
  updatedBy: string | null,
  now: Date,
): Promise<MaintenanceState> {
  const next: MaintenanceState = { ...change, updatedAt: now, updatedBy };
  await db.tx(async (tx) => {
    const before = await writeMaintenance(tx, next);
    await recordAudit(
      tx,
      {
        realmId: null,
        type: 'operations.maintenance.changed',
        category: 'operations',
        actor,
        data: {
          mode: next.mode,
          previous_mode: before.mode,
          retry_after_seconds: next.retryAfterSeconds,
          debug_until: next.debugUntil?.toISOString() ?? null,
          debug_component: next.debugComponent,
        },
      },
      now,
    );
  });
  return next;
}
