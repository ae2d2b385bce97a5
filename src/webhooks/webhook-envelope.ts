// The body a subscription receives (spec doc 2, Event envelope; Payload forms and fan-out 1;
// Versioning 1). Version 1 names the organization `org_id`; version 2 names it `organization_id`
// and states the payload form. Nothing else goes on the top level.

export type PayloadForm = 'minimal' | 'standard';
export type EventVersion = 1 | 2;

export interface EnvelopeEvent {
  id: string;
  type: string;
  occurredAt: Date;
  realmId: string;
  orgId: string | null;
  correlationId: string | null;
  data: Record<string, unknown>;
}

/** Members kept by the minimal form besides every member whose name ends in `_id`. */
const MINIMAL_MEMBERS: ReadonlySet<string> = new Set([
  'state',
  'reason',
  'authorization_revision',
  'mode',
  'signal',
  'event_type',
  'actor_type',
  'subject_type',
  'client_ref',
  'new_kid',
  'previous_kid',
  'previous_key_compromised',
]);

/** Types whose data is the same in both forms. */
const COMPLETE_IN_BOTH: ReadonlySet<string> = new Set([
  'client.state_changed',
  'signing_key.rotated',
  'security.alert',
]);

export function dataInForm(
  type: string,
  data: Record<string, unknown>,
  form: PayloadForm,
): Record<string, unknown> {
  if (form === 'standard' || COMPLETE_IN_BOTH.has(type)) return { ...data };
  return Object.fromEntries(
    Object.entries(data).filter(([name]) => name.endsWith('_id') || MINIMAL_MEMBERS.has(name)),
  );
}

export function renderEnvelope(e: EnvelopeEvent, version: EventVersion, form: PayloadForm): string {
  const data = dataInForm(e.type, e.data, form);
  const common = {
    event_id: e.id,
    event_type: e.type,
    event_version: version,
    occurred_at: e.occurredAt.toISOString(),
    realm_id: e.realmId,
  };
  const correlation = e.correlationId ? { correlation_id: e.correlationId } : {};
  if (version === 1) {
    return JSON.stringify({ ...common, ...(e.orgId ? { org_id: e.orgId } : {}), ...correlation, data });
  }
  return JSON.stringify({
    ...common,
    ...(e.orgId ? { organization_id: e.orgId } : {}),
    ...correlation,
    payload_form: form,
    data,
  });
}

/** GET /extension-contracts (spec doc 2, Versioning 1-2): none is deprecated now. */
export const EXTENSION_CONTRACTS = {
  webhook_event_versions: [
    { version: 1, envelope_schema: 'envelope.v1', default: true, deprecated: false, sunset_at: null },
    { version: 2, envelope_schema: 'envelope.v2', default: false, deprecated: false, sunset_at: null },
  ],
} as const;
