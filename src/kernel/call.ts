// One description of who is acting, where and when, carried by every use case (ARCHITECTURE,
// tier 1): the realm, the actor the audit record names, the request's correlation id (X-Request-Id,
// or the worker run) and one clock reading for the whole change.
import { AsyncLocalStorage } from 'node:async_hooks';

export type ActorType = 'user' | 'service_principal' | 'client' | 'system' | 'operator' | 'scim_connector';

export interface Actor {
  type: ActorType;
  id: string | null;
}

export const SYSTEM_ACTOR: Actor = { type: 'system', id: null };

export interface Call {
  realmId: string;
  actor: Actor;
  /** Null for work no request started. */
  correlationId: string | null;
  now: Date;
}

/**
 * The worker run in progress: the scheduler runs each task inside it, so evidence written by
 * background work carries the run id as its correlation id without every task threading it.
 */
export const workerRun = new AsyncLocalStorage<{ runId: string }>();

/**
 * The Call of work no request started (worker tasks, the CLI): correlated with the worker run when
 * there is one, else with nothing.
 */
export const systemCall = (realmId: string, now: Date, actor: Actor = SYSTEM_ACTOR): Call => ({
  realmId,
  actor,
  correlationId: workerRun.getStore()?.runId ?? null,
  now,
});
