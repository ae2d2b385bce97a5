// Ending support grants early: each grant that ends emits support.impersonation.ended in the
// same transaction (spec doc 2, Events). Expiry ends nothing here and emits nothing.
import { addEvent } from '../events/index.ts';
import type { Tx } from '../platform/db/db.ts';
import type { EndReason } from './support-grant.ts';
import { type EndedGrant, type GrantSelector, revokeSupportGrants } from './support-grants.repo.ts';

export async function endSupportGrants(
  tx: Tx,
  realmId: string,
  which: GrantSelector,
  reason: EndReason,
  by: { type: string; id: string | null },
  now: Date,
  correlationId?: string,
): Promise<EndedGrant[]> {
  const ended = await revokeSupportGrants(tx, realmId, which, reason, by, now);
  for (const g of ended) {
    await addEvent(tx, {
      realmId,
      type: 'support.impersonation.ended',
      occurredAt: now,
      ...(g.organization_id ? { orgId: g.organization_id } : {}),
      ...(correlationId ? { correlationId } : {}),
      data: { grant_id: g.id, reason },
    });
  }
  return ended;
}
