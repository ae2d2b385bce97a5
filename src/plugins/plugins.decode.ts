// The body of a plugin upload (docs/plugins.md): a manifest and a payload, each within its size
// (document 2, Limits, "Plugins"). Every hook, subscription and workflow of the payload is decoded
// by the decoder of its own create endpoint, so a package holds only what those endpoints accept;
// their field errors come back under the item's place in the payload.
import { decodeCreateHook, type HookInput } from '../hooks/index.ts';
import {
  array,
  type Decoded,
  decodeBody,
  object,
  optional,
  string,
  tryDecode,
  unknownJson,
} from '../platform/http/decode.ts';
import { type FieldError, Problem, problem } from '../platform/http/problem.ts';
import { ORGANIZATION_PERMISSIONS, REALM_PERMISSIONS } from '../roles/permissions.ts';
import { decodeCreateSubscription, type SubscriptionInput } from '../webhooks/index.ts';
import type { WorkflowInput } from '../workflows/workflows.decode.ts';
import { decodeWorkflowDefinition } from '../workflows/workflows.decode.ts';

export const MAX_MANIFEST_BYTES = 16 * 1024;
export const MAX_PAYLOAD_BYTES = 160 * 1024;
export const MAX_ITEMS_OF_A_KIND = 20;
export const MAX_DEPENDENCIES = 10;
export const MAX_PERMISSIONS = 50;

/** A plugin name: lower-case letters, digits, '.', '_' and '-' (docs/decisions.md, plugins). */
const NAME = /[a-z0-9][a-z0-9._-]{0,99}/;
/** MAJOR.MINOR.PATCH, numbers without leading zeros (Semantic Versioning 2.0.0 core). */
const VERSION = /(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})\.(0|[1-9][0-9]{0,8})/;
const KNOWN_PERMISSIONS: readonly string[] = [...REALM_PERMISSIONS, ...ORGANIZATION_PERMISSIONS];

const packageBody = object({
  manifest: unknownJson({ maxBytes: MAX_MANIFEST_BYTES }),
  payload: unknownJson({ maxBytes: MAX_PAYLOAD_BYTES }),
});

const manifestDecoder = object({
  name: string({ minLength: 1, maxLength: 100, pattern: NAME }),
  version: string({ minLength: 5, maxLength: 32, pattern: VERSION }),
  description: optional(string({ maxLength: 1000, pattern: /[^\p{Cc}]*/u })),
  dependencies: optional(
    array(string({ minLength: 1, maxLength: 100, pattern: NAME }), {
      maxItems: MAX_DEPENDENCIES,
      unique: true,
    }),
    [],
  ),
  permissions: optional(
    array(string({ minLength: 1, maxLength: 100 }), { maxItems: MAX_PERMISSIONS, unique: true }),
    [],
  ),
});
export type Manifest = Decoded<typeof manifestDecoder>;

const items = () => optional(array(unknownJson(), { maxItems: MAX_ITEMS_OF_A_KIND }), []);
const payloadDecoder = object({ hooks: items(), subscriptions: items(), workflows: items() });

export interface PluginPayload {
  hooks: HookInput[];
  subscriptions: SubscriptionInput[];
  workflows: WorkflowInput[];
}

export interface PluginPackage {
  manifest: Manifest;
  payload: PluginPayload;
  /** Both parts as sent, stored with the version and decoded again at installation. */
  wire: { manifest: unknown; payload: unknown };
}

/** Field errors gathered across parts, and whether any of them is a shape error (400). */
class Refusals {
  readonly errors: FieldError[] = [];
  private shape = false;

  /** Runs a decode; a refusal's errors are kept under `prefix`, and the part answers null. */
  take<T>(prefix: string, run: () => T): T | null {
    try {
      return run();
    } catch (e) {
      if (!(e instanceof Problem) || (e.status !== 400 && e.status !== 422)) throw e;
      if (e.status === 400) this.shape = true;
      const own = e.extra?.errors ?? [{ field: '', code: e.code, ...(e.detail ? { detail: e.detail } : {}) }];
      for (const err of own)
        this.errors.push({ ...err, field: err.field ? `${prefix}.${err.field}` : prefix });
      return null;
    }
  }

  add(error: FieldError): void {
    this.errors.push(error);
  }

  throwIfAny(): void {
    if (this.errors.length === 0) return;
    throw this.shape
      ? problem.invalidRequest('the plugin package has invalid members', this.errors)
      : problem.validation(this.errors, 'the plugin package breaks a rule');
  }
}

/** Decodes what was stored or sent; `body` is the request body (the only one the route walk sees). */
export function decodePluginPackage(body: unknown): PluginPackage {
  const b = decodeBody(packageBody, body);
  return decodeParts(b.manifest, b.payload);
}

/** Both parts of a package, as uploaded or as stored with a version. */
export function decodeParts(manifestWire: unknown, payloadWire: unknown): PluginPackage {
  const refusals = new Refusals();
  const manifest = refusals.take('manifest', () => partOrShape(manifestDecoder, manifestWire));
  manifest?.permissions.forEach((p, i) => {
    if (!KNOWN_PERMISSIONS.includes(p))
      refusals.add({
        field: `manifest.permissions[${i}]`,
        code: 'not_allowed',
        detail: 'no such permission',
      });
  });
  const lists = refusals.take('payload', () => partOrShape(payloadDecoder, payloadWire));
  const payload: PluginPayload = { hooks: [], subscriptions: [], workflows: [] };
  if (lists) {
    lists.hooks.forEach((h, i) => {
      const v = refusals.take(`payload.hooks[${i}]`, () => decodeCreateHook(h));
      if (v) payload.hooks.push(v);
    });
    lists.subscriptions.forEach((s, i) => {
      const v = refusals.take(`payload.subscriptions[${i}]`, () => decodeCreateSubscription(s));
      if (v) payload.subscriptions.push(v);
    });
    lists.workflows.forEach((w, i) => {
      const v = refusals.take(`payload.workflows[${i}]`, () => decodeWorkflowDefinition(w));
      if (v) payload.workflows.push(v);
    });
  }
  refusals.throwIfAny();
  return { manifest: manifest as Manifest, payload, wire: { manifest: manifestWire, payload: payloadWire } };
}

/** A part decoded: a wrong shape answers 400, a value out of its rules 422 (as a body would). */
function partOrShape<T>(decoder: Parameters<typeof tryDecode<T>>[0], value: unknown): T {
  const r = tryDecode(decoder, value);
  if (r.ok) return r.value;
  const shape = r.errors.some((e) => e.code === 'type' || e.code === 'unknown_member');
  throw shape ? problem.invalidRequest('invalid members', r.errors) : problem.validation(r.errors);
}
