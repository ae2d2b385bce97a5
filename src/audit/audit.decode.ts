// Request bodies and list filters of the audit API (spec doc 2, Audit records and Audit endpoints).
import { Buffer } from 'node:buffer';
import {
  enumOf,
  nullable,
  object,
  optional,
  record,
  refine,
  string,
  unknownJson,
} from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import type { AuditEventFilters } from './audit-events.repo.ts';

const id = () => string({ minLength: 1, maxLength: 128, printableAscii: true });

export const decodeLegalHold = object({
  reason: string({ minLength: 5, maxLength: 500 }),
  organization_id: optional(nullable(id())),
  subject_id: optional(nullable(id())),
});

const isPlainObject = (v: unknown) =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? null : 'an object';

export const decodeCorrection = object({
  reason: string({ minLength: 5, maxLength: 1000 }),
  // At most 8 KiB as JSON.
  correction: optional(refine(unknownJson({ maxBytes: 8 * 1024 }), isPlainObject, 'type')),
});

/**
 * An application's own name for what happened, e.g. invoice.approved: lower-case letters, digits
 * and `_ . : -`, starting with a letter or digit. Anchored here, not only by string(), so the rule
 * reads whole wherever it is used.
 */
export const ACTIVITY_NAME = /^[a-z0-9][a-z0-9_.:-]*$/;

export const decodeActivity = object({
  activity: string({ minLength: 1, maxLength: 100, pattern: ACTIVITY_NAME }),
  outcome: optional(enumOf(['success', 'failure'] as const)),
  subject_id: optional(nullable(id())),
  target_id: optional(nullable(id())),
  organization_id: optional(nullable(id())),
  data: optional(
    refine(record(unknownJson()), (v) => (jsonSize(v) <= 8 * 1024 ? null : 'at most 8192 bytes'), 'too_long'),
  ),
});

const jsonSize = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

export const AUDIT_EVENT_FILTERS = [
  'type',
  'category',
  'actor_id',
  'subject_id',
  'target_id',
  'from',
  'to',
] as const;

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

function instant(name: string, text: string | undefined): Date | undefined {
  if (text === undefined) return undefined;
  const t = Date.parse(text);
  if (!RFC3339.test(text) || Number.isNaN(t))
    throw problem.invalidRequest(`${name} must be an RFC 3339 date-time`);
  return new Date(t);
}

export function auditEventFilters(
  f: Partial<Record<(typeof AUDIT_EVENT_FILTERS)[number], string>>,
): AuditEventFilters {
  const from = instant('from', f.from);
  const to = instant('to', f.to);
  return {
    ...(f.type ? { type: f.type } : {}),
    ...(f.category ? { category: f.category } : {}),
    ...(f.actor_id ? { actorId: f.actor_id } : {}),
    ...(f.subject_id ? { subjectId: f.subject_id } : {}),
    ...(f.target_id ? { targetId: f.target_id } : {}),
    ...(from ? { from } : {}),
    ...(to ? { to } : {}),
  };
}
