// Request bodies of the webhook subscription endpoints (spec doc 2, Webhook subscription; Webhooks
// endpoints). Unknown members are 400; values that break a rule are 422 on their field.
import { isEventType } from '../events/index.ts';
import {
  array,
  boolean,
  decodeBody,
  enumOf,
  integer,
  nullable,
  object,
  optional,
  refine,
  string,
} from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import type { SubscriptionState } from './subscriptions.repo.ts';
import { MAX_URL_CHARS } from './webhook-destination.ts';
import type { EventVersion, PayloadForm } from './webhook-envelope.ts';

export const PAYLOAD_FORMS = ['minimal', 'standard'] as const;
export const SUBSCRIPTION_STATES = ['active', 'paused', 'disabled'] as const;
const MAX_EVENT_TYPES = 100;

const name = () => string({ minLength: 1, maxLength: 200, pattern: /[^\p{Cc}]+/u });
const destination = () => string({ minLength: 1, maxLength: MAX_URL_CHARS });
const eventTypes = () =>
  refine(
    array(string({ minLength: 1, maxLength: 128 }), { minItems: 1, maxItems: MAX_EVENT_TYPES, unique: true }),
    (list) => {
      if (list.includes('*') && list.length > 1) return '`*` stands alone';
      const unknown = list.find((t) => t !== '*' && !isEventType(t));
      return unknown === undefined ? null : `not a catalog event type: ${unknown.slice(0, 128)}`;
    },
    'unknown_event_type',
  );
// Any integer decodes; a value other than 1 or 2 is its own 422 (spec doc 2, Errors).
const eventVersion = () =>
  refine(
    integer(),
    (v) => (v === 1 || v === 2 ? null : 'event_version is 1 or 2'),
    'unsupported_event_version',
  );

export interface SubscriptionInput {
  name: string;
  destinationUrl: string;
  eventTypes: string[];
  organizationId: string | null;
  payloadForm: PayloadForm;
  eventVersion: EventVersion;
  allowPrivateNetwork: boolean;
  state: SubscriptionState;
}

export type SubscriptionPatch = Partial<Omit<SubscriptionInput, 'organizationId'>>;

const createBody = object({
  name: name(),
  destination_url: destination(),
  event_types: eventTypes(),
  organization_id: optional(nullable(string({ minLength: 1, maxLength: 128 }))),
  payload_form: optional(enumOf(PAYLOAD_FORMS), 'minimal'),
  event_version: optional(eventVersion(), 1),
  allow_private_network: optional(boolean(), false),
  state: optional(enumOf(SUBSCRIPTION_STATES), 'active'),
});

const patchBody = object({
  name: optional(name()),
  destination_url: optional(destination()),
  event_types: optional(eventTypes()),
  payload_form: optional(enumOf(PAYLOAD_FORMS)),
  event_version: optional(eventVersion()),
  allow_private_network: optional(boolean()),
  state: optional(enumOf(SUBSCRIPTION_STATES)),
});

export function decodeCreate(body: unknown): SubscriptionInput {
  const b = decodeBody(createBody, body);
  return {
    name: b.name,
    destinationUrl: b.destinationUrl,
    eventTypes: b.eventTypes,
    organizationId: b.organizationId ?? null,
    payloadForm: b.payloadForm,
    eventVersion: b.eventVersion as EventVersion,
    allowPrivateNetwork: b.allowPrivateNetwork,
    state: b.state,
  };
}

export function decodePatch(body: unknown): SubscriptionPatch {
  // organization_id fixes the subscription's scope for good (spec doc 2, Webhook subscription).
  if (body && typeof body === 'object' && !Array.isArray(body) && Object.hasOwn(body, 'organization_id'))
    throw problem.invalidRequest('organization_id cannot be changed', [
      { field: 'organization_id', code: 'immutable', detail: 'organization_id cannot be changed' },
    ]);
  const b = decodeBody(patchBody, body);
  const out: SubscriptionPatch = {};
  if (b.name !== undefined) out.name = b.name;
  if (b.destinationUrl !== undefined) out.destinationUrl = b.destinationUrl;
  if (b.eventTypes !== undefined) out.eventTypes = b.eventTypes;
  if (b.payloadForm !== undefined) out.payloadForm = b.payloadForm;
  if (b.eventVersion !== undefined) out.eventVersion = b.eventVersion as EventVersion;
  if (b.allowPrivateNetwork !== undefined) out.allowPrivateNetwork = b.allowPrivateNetwork;
  if (b.state !== undefined) out.state = b.state;
  return out;
}
