// Request bodies of the hook endpoints (docs/hooks.md; the fields of document 2, Realm data export,
// hook line). Unknown members are 400; values that break a rule are 422 on their field.
import {
  array,
  boolean,
  decodeBody,
  enumOf,
  integer,
  object,
  optional,
  string,
} from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { MAX_URL_CHARS } from '../webhooks/index.ts';
import { FAILURE_MODES, HOOK_KINDS, HOOK_STATES, type HookChanges, type HookKind } from './hooks.repo.ts';

/** timeout_ms bounds and default (docs/decisions.md, hooks). */
export const MIN_TIMEOUT_MS = 100;
export const MAX_TIMEOUT_MS = 5000;
export const DEFAULT_TIMEOUT_MS = 2000;
const MAX_CLIENTS = 100;

const name = () => string({ minLength: 1, maxLength: 200, pattern: /[^\p{Cc}]+/u });
const url = () => string({ minLength: 1, maxLength: MAX_URL_CHARS });
const timeout = () => integer({ min: MIN_TIMEOUT_MS, max: MAX_TIMEOUT_MS });
const clientIds = () =>
  array(string({ minLength: 1, maxLength: 128, pattern: /[\x21-\x7e]+/ }), {
    maxItems: MAX_CLIENTS,
    unique: true,
  });

export interface HookInput extends HookChanges {
  kind: HookKind;
}

export type HookPatch = Partial<HookChanges>;

const createBody = object({
  name: name(),
  kind: enumOf(HOOK_KINDS),
  url: url(),
  timeout_ms: optional(timeout(), DEFAULT_TIMEOUT_MS),
  failure_mode: optional(enumOf(FAILURE_MODES), 'fail_open'),
  client_ids: optional(clientIds(), []),
  allow_private_network: optional(boolean(), false),
  state: optional(enumOf(HOOK_STATES), 'active'),
});

const patchBody = object({
  name: optional(name()),
  url: optional(url()),
  timeout_ms: optional(timeout()),
  failure_mode: optional(enumOf(FAILURE_MODES)),
  client_ids: optional(clientIds()),
  allow_private_network: optional(boolean()),
  state: optional(enumOf(HOOK_STATES)),
});

export function decodeCreateHook(body: unknown): HookInput {
  return decodeBody(createBody, body);
}

export function decodePatchHook(body: unknown): HookPatch {
  // A hook's kind decides what its answers mean: it is fixed at creation.
  if (body && typeof body === 'object' && !Array.isArray(body) && Object.hasOwn(body, 'kind'))
    throw problem.invalidRequest('kind cannot be changed', [
      { field: 'kind', code: 'immutable', detail: 'kind cannot be changed' },
    ]);
  const b = decodeBody(patchBody, body);
  const out: HookPatch = {};
  for (const [k, v] of Object.entries(b)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  return out;
}
