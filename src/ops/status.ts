// The operator status object behind GET /status (spec doc 2, "Operator status object"). It lists
// the capabilities that exist in this release; later ones join as they are built.
import {
  clockSkewMs,
  databaseUp,
  jobsBacklog,
  outboxBacklog,
  type ProbeContext,
  schema,
  signing,
} from './probes.ts';

type Capability = 'ok' | 'degraded' | 'unavailable';

/** A queue whose oldest item waited longer than this degrades its capability (spec doc 2, Limits). */
export const BACKLOG_DEGRADED_SECONDS = 300;

export interface StatusContext extends ProbeContext {
  keyProvider: 'kms_unwrapped' | 'software';
}

export async function operatorStatus(ctx: StatusContext): Promise<Record<string, unknown>> {
  const time = ctx.clock.now().toISOString();
  const base = { time, key_provider: ctx.keyProvider };
  if (!(await databaseUp(ctx))) {
    return { status: 'unavailable', ...base, capabilities: { database: 'unavailable' } };
  }
  try {
    const [schemaState, signingHealth, skew, outboxAge, jobsAge] = await Promise.all([
      schema(ctx),
      signing(ctx),
      clockSkewMs(ctx),
      outboxBacklog(ctx),
      jobsBacklog(ctx),
    ]);
    const capabilities: Record<string, Capability> = {
      database: 'ok',
      schema: schemaState.current ? 'ok' : 'degraded',
      signing: signingHealth.realmsMissing > 0 ? 'unavailable' : 'ok',
      outbox: outboxAge > BACKLOG_DEGRADED_SECONDS ? 'degraded' : 'ok',
      jobs: jobsAge > BACKLOG_DEGRADED_SECONDS ? 'degraded' : 'ok',
    };
    const allOk = Object.values(capabilities).every((c) => c === 'ok');
    return {
      status: allOk ? 'ok' : 'degraded',
      ...base,
      ...(schemaState.pending.length > 0 ? { schema: 'behind' } : {}),
      capabilities,
      backlog_oldest_seconds: { outbox: outboxAge, jobs: jobsAge },
      clock_skew_ms: skew,
    };
  } catch {
    return { status: 'unavailable', ...base, capabilities: { database: 'unavailable' } };
  }
}
