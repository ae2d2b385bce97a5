// The audit record and outbox events of the organizations context, written in the use case's
// transaction. Events about an organization carry its id on the envelope (doc 2, Catalog:
// organization events always name the organization).

import type { AuditType } from '../audit/audit.types.ts';
import { recordAudit } from '../audit/index.ts';
import type { EventData, EventType } from '../events/catalog.ts';
import { addEvent } from '../events/index.ts';
import type { Tx } from '../platform/db/db.ts';
import type { OrgCall } from './organizations.types.ts';

export interface AuditDetails {
  subject?: { type: string; id: string };
  target?: { type: string; id: string };
  reason?: string | null;
  data?: Record<string, unknown>;
}

export async function auditOrg(
  tx: Tx,
  call: OrgCall,
  type: AuditType,
  orgId: string,
  d: AuditDetails = {},
): Promise<void> {
  await recordAudit(
    tx,
    {
      realmId: call.realmId,
      type,
      category: 'identity',
      actor: call.actor,
      orgId,
      target: d.target ?? { type: 'organization', id: orgId },
      ...(d.subject ? { subject: d.subject } : {}),
      ...(call.correlationId === null ? {} : { correlationId: call.correlationId }),
      ...(d.reason ? { reason: d.reason } : {}),
      data: { organization_id: orgId, ...d.data },
    },
    call.now,
  );
}

export async function orgEvent<T extends EventType>(
  tx: Tx,
  call: OrgCall,
  orgId: string,
  type: T,
  data: EventData[T],
): Promise<void> {
  await addEvent(tx, {
    realmId: call.realmId,
    type,
    occurredAt: call.now,
    orgId,
    ...(call.correlationId === null ? {} : { correlationId: call.correlationId }),
    data,
  });
}
