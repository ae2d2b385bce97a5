// Request bodies of federation transfers (spec doc 1, endpoints table "Federation transfers" and
// Limits: entry members and their sizes, 2000 entries per request, reason 1..500).
import { array, decodeBody, enumOf, nullable, object, optional, string } from '../platform/http/decode.ts';
import type { EntryInput } from './transfer-analysis.ts';

export const ENTRIES_PER_REQUEST = 2000;
export const ENTRIES_PER_TRANSFER = 50_000;

// A single line: no control characters (line breaks included).
const singleLine = (max: number) => string({ minLength: 1, maxLength: max, pattern: /[^\p{Cc}]+/u });
// A tenant is substituted into an issuer URL, so only characters that stay one path segment.
const tenant = () => string({ minLength: 1, maxLength: 128, pattern: /[A-Za-z0-9._-]+/ });

const entryShape = object({
  source_subject: singleLine(255),
  target_subject: singleLine(255),
  source_issuer: optional(nullable(string({ minLength: 1, maxBytes: 512, pattern: /[^\p{Cc}]+/u }))),
  target_tenant: optional(nullable(tenant())),
});

const entries = (min: number) => array(entryShape, { minItems: min, maxItems: ENTRIES_PER_REQUEST });

const createShape = object({
  source_provider_id: string({ minLength: 1, maxLength: 64, printableAscii: true }),
  target_provider_id: string({ minLength: 1, maxLength: 64, printableAscii: true }),
  mode: enumOf(['map', 'same_subject'] as const),
  target_tenant: optional(nullable(tenant())),
  reason: string({ minLength: 1, maxLength: 500 }),
  entries: optional(entries(0)),
});

const addShape = object({ entries: entries(1) });

export type NewEntry = Omit<EntryInput, 'seq'>;

export interface TransferInput {
  sourceProviderId: string;
  targetProviderId: string;
  mode: 'map' | 'same_subject';
  targetTenant: string | null;
  reason: string;
  /** Null when the member was absent. */
  entries: NewEntry[] | null;
}

const toEntry = (e: ReturnType<typeof entryShape>): NewEntry => ({
  source_subject: e.sourceSubject,
  target_subject: e.targetSubject,
  source_issuer: e.sourceIssuer ?? null,
  target_tenant: e.targetTenant ?? null,
});

export function decodeCreateTransfer(body: unknown): TransferInput {
  const b = decodeBody(createShape, body);
  return {
    sourceProviderId: b.sourceProviderId,
    targetProviderId: b.targetProviderId,
    mode: b.mode,
    targetTenant: b.targetTenant ?? null,
    reason: b.reason,
    entries: b.entries ? b.entries.map(toEntry) : null,
  };
}

export function decodeAddEntries(body: unknown): NewEntry[] {
  return decodeBody(addShape, body).entries.map(toEntry);
}
