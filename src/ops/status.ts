// The operator status object behind GET /status (spec doc 2, "Operator status object"). It lists
// the capabilities that exist in this release; later ones join as they are built.

import type { FidoMetadataStatus } from '../mfa/index.ts';
import { readMaintenance } from './maintenance.repo.ts';
import { presentMaintenance } from './maintenance.ts';
import {
  auditUnsealed,
  clockSkewMs,
  databaseUp,
  jobsBacklog,
  notificationBacklog,
  outboxBacklog,
  type ProbeContext,
  schema,
  signing,
  webhooksBacklog,
} from './probes.ts';

type Capability = 'ok' | 'degraded' | 'unavailable';

/** A queue whose oldest item waited longer than this degrades its capability (spec doc 2, Limits). */
export const BACKLOG_DEGRADED_SECONDS = 300;

export interface StatusContext extends ProbeContext {
  keyProvider: 'kms_unwrapped' | 'software';
  /** The operator's FIDO metadata; its member appears only when webauthn.metadata_blob is set. */
  fidoMetadata: { status(): Promise<FidoMetadataStatus | null> };
  config: { privacy: { residency: { region: string | null; allowedDestinations: readonly string[] } } };
}

/** The residency member: only when the operator configured a region or allowed destinations. */
function residencyOf(ctx: StatusContext): Record<string, unknown> {
  const { region, allowedDestinations } = ctx.config.privacy.residency;
  if (region === null && allowedDestinations.length === 0) return {};
  return { residency: { region, destinations_restricted: allowedDestinations.length > 0 } };
}

const settled = <T>(r: PromiseSettledResult<T>): T | null => (r.status === 'fulfilled' ? r.value : null);

const backlogCapability = (ageSeconds: number | null): Capability =>
  ageSeconds === null ? 'unavailable' : ageSeconds > BACKLOG_DEGRADED_SECONDS ? 'degraded' : 'ok';

export async function operatorStatus(ctx: StatusContext): Promise<Record<string, unknown>> {
  const time = ctx.clock.now().toISOString();
  const base = { time, key_provider: ctx.keyProvider, ...residencyOf(ctx) };
  const down = { status: 'unavailable', ...base, capabilities: { database: 'unavailable' } };
  if (!(await databaseUp(ctx))) return down;
  // Each probe on its own: on a schema that is behind, the tables a probe reads may not exist yet,
  // and that makes its capability unavailable, not the database.
  const [
    schemaResult,
    signingResult,
    skewResult,
    outboxResult,
    jobsResult,
    mailResult,
    sealingResult,
    webhooksResult,
    maintenanceResult,
    fidoResult,
  ] = await Promise.allSettled([
    schema(ctx),
    signing(ctx),
    clockSkewMs(ctx),
    outboxBacklog(ctx),
    jobsBacklog(ctx),
    notificationBacklog(ctx),
    auditUnsealed(ctx).then((u) => u.oldestSeconds),
    webhooksBacklog(ctx),
    readMaintenance(ctx.db),
    ctx.fidoMetadata.status(),
  ]);
  const schemaState = settled(schemaResult);
  if (!schemaState) return down;
  const signingHealth = settled(signingResult);
  const skew = settled(skewResult);
  const outboxAge = settled(outboxResult);
  const jobsAge = settled(jobsResult);
  const mailAge = settled(mailResult);
  const sealingAge = settled(sealingResult);
  const webhooksAge = settled(webhooksResult);
  const capabilities: Record<string, Capability> = {
    database: 'ok',
    schema: schemaState.current ? 'ok' : 'degraded',
    signing: signingHealth === null || signingHealth.realmsMissing > 0 ? 'unavailable' : 'ok',
    outbox: backlogCapability(outboxAge),
    webhooks: backlogCapability(webhooksAge),
    jobs: backlogCapability(jobsAge),
    // By backlog age alone: without a mail transport nothing that mails is offered, and mail queued
    // anyway (invitations) ages past the threshold and degrades it.
    email_delivery: backlogCapability(mailAge),
    audit_sealing: backlogCapability(sealingAge),
  };
  const allOk = Object.values(capabilities).every((c) => c === 'ok');
  const maintenanceState = settled(maintenanceResult);
  const maintenance = maintenanceState ? presentMaintenance(maintenanceState, ctx.clock.now()) : null;
  const inMaintenance = maintenance !== null && maintenance.mode !== 'off';
  // An extra member, not a capability: it concerns passkey registrations that need operator
  // metadata, and doc 2 lists the capabilities that decide `status` (docs/decisions.md).
  const fidoMetadata = settled(fidoResult);
  return {
    status: inMaintenance ? 'maintenance' : allOk ? 'ok' : 'degraded',
    ...base,
    ...(schemaState.pending.length > 0 ? { schema: 'behind' } : {}),
    capabilities,
    backlog_oldest_seconds: {
      ...(outboxAge === null ? {} : { outbox: outboxAge }),
      ...(webhooksAge === null ? {} : { webhooks: webhooksAge }),
      ...(jobsAge === null ? {} : { jobs: jobsAge }),
      ...(mailAge === null ? {} : { email_delivery: mailAge }),
      ...(sealingAge === null ? {} : { audit_sealing: sealingAge }),
    },
    ...(skew === null ? {} : { clock_skew_ms: skew }),
    ...(maintenance === null ? {} : { maintenance }),
    ...(fidoMetadata === null ? {} : { fido_metadata: fidoMetadata }),
  };
}
