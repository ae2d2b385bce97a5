// The audit record of the organizations context, written through the change's recorder. Events
// about an organization carry its id on the envelope (doc 2, Catalog: organization events always
// name the organization): pass it as the recorder's orgId.

import type { AuditType } from '../audit/audit.types.ts';
import type { Recorder } from '../audit/index.ts';

export interface AuditDetails {
  subject?: { type: string; id: string };
  target?: { type: string; id: string };
  reason?: string | null;
  data?: Record<string, unknown>;
}

/** An identity record of the organization: its id on the record and in the data, and as target unless another is named. */
export const auditOrg = (record: Recorder, type: AuditType, orgId: string, d: AuditDetails = {}) =>
  record.audit(type, {
    category: 'identity',
    orgId,
    target: d.target ?? { type: 'organization', id: orgId },
    ...(d.subject ? { subject: d.subject } : {}),
    reason: d.reason || null,
    data: { organization_id: orgId, ...d.data },
  });
