// The body of POST /workflows and PUT /workflows/{id} (docs/workflows.md): a name, triggers and
// steps within document 2's limits (Limits, "Lifecycle workflows": 1..5 triggers, 1..20 steps, the
// whole definition at most 64 KiB). The step and trigger kinds are lists, so a kind added later (a
// hook call) is one entry here and one in workflow-steps.ts.
import { BULK_ACTIONS, type BulkRequest, bulkRequestProblems } from '../bulk/user-bulk.format.ts';
import { EVENT_CATALOG, EVENT_TYPES, type EventType } from '../events/catalog.ts';
import {
  array,
  boolean,
  type Decoded,
  decodeBody,
  enumOf,
  integer,
  object,
  optional,
  record,
  string,
} from '../platform/http/decode.ts';
import { type FieldError, problem } from '../platform/http/problem.ts';
import { plainText } from '../roles/admin-call.ts';
import { ADMIN_REQUIRED_ACTIONS } from '../users/index.ts';

export const MAX_TRIGGERS = 5;
export const MAX_STEPS = 20;
export const MAX_DEFINITION_BYTES = 64 * 1024;

/** The step kinds: the bulk actions on one account, a mail to it, a pause, a hook call. */
export const STEP_KINDS = [...BULK_ACTIONS, 'send_mail', 'wait', 'call_hook'] as const;
export type StepKind = (typeof STEP_KINDS)[number];

/** Events about one account (their data names it as user_id): the ones that can start a run. */
export const TRIGGER_EVENT_TYPES = EVENT_TYPES.filter((t) =>
  (EVENT_CATALOG[t].data as readonly string[]).includes('user_id'),
);
export const SCHEDULE_ATTRIBUTES = ['created_at', 'last_login_at'] as const;

const trigger = object({
  type: enumOf(['event', 'schedule'] as const),
  event_type: optional(enumOf(TRIGGER_EVENT_TYPES)),
  filter: optional(record(string({ maxLength: 200 }), { maxEntries: 10 })),
  user_attribute: optional(enumOf(SCHEDULE_ATTRIBUTES)),
  offset_days: optional(integer({ min: 0, max: 3650 })),
  every_hours: optional(integer({ min: 1, max: 168 })),
});
export type Trigger = Decoded<typeof trigger>;

export const stepDecoder = object({
  kind: enumOf(STEP_KINDS),
  reason: optional(plainText(500, 1)),
  required_action: optional(enumOf(ADMIN_REQUIRED_ACTIONS)),
  group_id: optional(string({ pattern: /grp_[0-9a-z]{26}/ })),
  organization_id: optional(string({ pattern: /org_[0-9a-z]{26}/ })),
  subject: optional(plainText(200, 1)),
  message: optional(plainText(4000, 1)),
  duration_hours: optional(integer({ min: 1, max: 8760 })),
  hook_id: optional(string({ pattern: /hok_[0-9a-z]{26}/ })),
  continue_on_error: optional(boolean()),
});
export type Step = Decoded<typeof stepDecoder>;

export const decodeWorkflow = object({
  name: plainText(200, 1),
  description: optional(plainText(1000)),
  enabled: optional(boolean(), true),
  triggers: array(trigger, { minItems: 1, maxItems: MAX_TRIGGERS }),
  steps: array(stepDecoder, { minItems: 1, maxItems: MAX_STEPS }),
});
export type WorkflowInput = Decoded<typeof decodeWorkflow>;

/** 422 when the body, as compact JSON, is larger than a definition may be. */
export function ensureDefinitionSize(body: unknown): void {
  const bytes = Buffer.byteLength(JSON.stringify(body ?? null));
  if (bytes > MAX_DEFINITION_BYTES)
    throw problem.validation(
      [{ field: '', code: 'too_long', detail: `at most ${MAX_DEFINITION_BYTES} bytes as compact JSON` }],
      `a workflow definition is at most ${MAX_DEFINITION_BYTES} bytes`,
    );
}

/** A body as a definition: its size first, then its members, then the rules between them. */
export function decodeWorkflowDefinition(body: unknown): WorkflowInput {
  ensureDefinitionSize(body);
  const w = decodeBody(decodeWorkflow, body);
  const errors = workflowProblems(w);
  if (errors.length > 0) throw problem.validation(errors);
  return w;
}

/** The bulk request a bulk-action step makes for one account. */
export const bulkRequestOf = (s: Step, userId: string): BulkRequest => ({
  action: s.kind as BulkRequest['action'],
  userIds: [userId],
  ...(s.reason === undefined ? {} : { reason: s.reason }),
  ...(s.requiredAction === undefined ? {} : { requiredAction: s.requiredAction }),
  ...(s.groupId === undefined ? {} : { groupId: s.groupId }),
  ...(s.organizationId === undefined ? {} : { organizationId: s.organizationId }),
});

export const isBulkStep = (s: Pick<Step, 'kind'>): boolean =>
  (BULK_ACTIONS as readonly string[]).includes(s.kind);

type OwnGroup = 'send_mail' | 'wait' | 'call_hook' | 'bulk';
const OWN_MEMBERS: Record<OwnGroup, readonly (keyof Step)[]> = {
  send_mail: ['subject', 'message'],
  wait: ['durationHours'],
  call_hook: ['hookId'],
  bulk: ['reason', 'requiredAction', 'groupId', 'organizationId'],
};
const WIRE: Partial<Record<keyof Step, string>> = {
  subject: 'subject',
  message: 'message',
  durationHours: 'duration_hours',
  hookId: 'hook_id',
  reason: 'reason',
  requiredAction: 'required_action',
  groupId: 'group_id',
  organizationId: 'organization_id',
};

function stepProblems(s: Step, at: string): FieldError[] {
  const own = isBulkStep(s) ? 'bulk' : (s.kind as OwnGroup);
  const errors: FieldError[] = [];
  for (const [group, members] of Object.entries(OWN_MEMBERS))
    for (const m of members)
      if (group !== own && s[m] !== undefined)
        errors.push({ field: `${at}.${WIRE[m]}`, code: 'not_allowed', detail: `not a member of ${s.kind}` });
  if (own === 'bulk')
    for (const e of bulkRequestProblems(bulkRequestOf(s, 'usr_')))
      errors.push({ ...e, field: `${at}.${e.field}` });
  else
    for (const m of OWN_MEMBERS[own])
      if (s[m] === undefined)
        errors.push({ field: `${at}.${WIRE[m]}`, code: 'required', detail: `${s.kind} needs it` });
  return errors;
}

function triggerProblems(t: Trigger, at: string): FieldError[] {
  const errors: FieldError[] = [];
  const refuse = (member: string, code: string, detail: string) =>
    errors.push({ field: `${at}.${member}`, code, detail });
  if (t.type === 'event') {
    if (t.eventType === undefined) refuse('event_type', 'required', 'an event trigger names its event type');
    const scheduleMembers = [
      ['user_attribute', t.userAttribute],
      ['offset_days', t.offsetDays],
      ['every_hours', t.everyHours],
    ] as const;
    for (const [m, v] of scheduleMembers)
      if (v !== undefined) refuse(m, 'not_allowed', 'a member of schedule triggers');
    const members = t.eventType ? (EVENT_CATALOG[t.eventType as EventType].data as readonly string[]) : [];
    for (const key of Object.keys(t.filter ?? {}))
      if (!members.includes(key) || key === 'user_id')
        refuse(`filter.${key}`, 'not_allowed', `not a data member of ${t.eventType} to filter on`);
  } else {
    if (t.userAttribute === undefined)
      refuse('user_attribute', 'required', 'a schedule trigger names the account date it counts from');
    if (t.eventType !== undefined) refuse('event_type', 'not_allowed', 'a member of event triggers');
    if (t.filter !== undefined) refuse('filter', 'not_allowed', 'a member of event triggers');
  }
  return errors;
}

/** The rules between members that the decoder alone does not state (422 for each). */
export function workflowProblems(w: WorkflowInput): FieldError[] {
  return [
    ...w.triggers.flatMap((t, i) => triggerProblems(t, `triggers[${i}]`)),
    ...w.steps.flatMap((s, i) => stepProblems(s, `steps[${i}]`)),
  ];
}
