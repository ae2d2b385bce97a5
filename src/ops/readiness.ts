// GET /health/ready (spec doc 2, Health): the first failing condition decides the answer. The body
// is exactly the spec's: only clock skew and the restore marker name a reason; /status says which
// capability failed.
import { clockSkewMs, databaseUp, type ProbeContext, restorePending, schema, signing } from './probes.ts';

export interface ReadinessContext extends ProbeContext {
  isDraining(): boolean;
  maxClockSkewMs: number;
}

export interface Readiness {
  httpStatus: 200 | 503;
  body: {
    status: 'ready' | 'unavailable' | 'degraded' | 'draining';
    reason?: 'clock_skew' | 'restore_pending';
  };
}

export async function readiness(ctx: ReadinessContext): Promise<Readiness> {
  if (ctx.isDraining()) return { httpStatus: 503, body: { status: 'draining' } };
  if (!(await databaseUp(ctx))) return { httpStatus: 503, body: { status: 'unavailable' } };
  try {
    // Before the schema check: a restored database is marked before it is migrated and served.
    if (await restorePending(ctx))
      return { httpStatus: 503, body: { status: 'unavailable', reason: 'restore_pending' } };
    if (!(await schema(ctx)).current) return { httpStatus: 503, body: { status: 'unavailable' } };
    if (Math.abs(await clockSkewMs(ctx)) > ctx.maxClockSkewMs) {
      return { httpStatus: 503, body: { status: 'degraded', reason: 'clock_skew' } };
    }
    if ((await signing(ctx)).activeRealmsMissing > 0) {
      return { httpStatus: 503, body: { status: 'degraded' } };
    }
  } catch {
    return { httpStatus: 503, body: { status: 'unavailable' } };
  }
  return { httpStatus: 200, body: { status: 'ready' } };
}
