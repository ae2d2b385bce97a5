// One description of who is acting, where and when, carried by every use case (ARCHITECTURE,
// tier 1): the realm, the actor the audit record names, the request's correlation id (X-Request-Id,
// or the worker run) and one clock reading for the whole change.

export type ActorType = 'user' | 'service_principal' | 'client' | 'system' | 'operator';

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

/** The Call of work no request started (worker tasks, the CLI): nothing to correlate with. */
export const systemCall = (realmId: string, now: Date, actor: Actor = SYSTEM_ACTOR): Call => ({
  realmId,
  actor,
  correlationId: null,
  now,
});
