// Ending one grant early, whether the customer or support does it: the grant ends (with its
// event), a grant already ended is a conflict, and the revocation is audited.

import type { Actor } from '../audit/audit.types.ts';
import { recorder } from '../audit/index.ts';
import type { Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { findSupportGrant } from '../support-grants/index.ts';
import { endSupportGrants } from '../support-grants/support-end.ts';
import type { EndReason, SupportGrantRow } from '../support-grants/support-grant.ts';

/** Revokes the locked grant `g`; returns it as it stands after ending. */
export async function revokeLockedGrant(
  tx: Tx,
  call: { realmId: string; correlationId: string; now: Date },
  g: SupportGrantRow,
  end: {
    reason: EndReason;
    actor: Actor;
    subject: { type: string; id: string };
    data?: Record<string, unknown>;
  },
): Promise<SupportGrantRow> {
  const ended = await endSupportGrants(
    tx,
    call.realmId,
    { id: g.id },
    end.reason,
    end.actor,
    call.now,
    call.correlationId,
  );
  if (ended.length === 0) throw problem.conflict('the support grant has already ended');
  await recorder(tx, { ...call, actor: end.actor }).audit('support.grant.revoked', {
    category: 'security',
    subject: end.subject,
    target: { type: 'support_grant', id: g.id },
    orgId: g.organization_id,
    reason: end.reason,
    ...(end.data ? { data: end.data } : {}),
  });
  return (await findSupportGrant(tx, call.realmId, g.id)) ?? g;
}
