// The audit export request (spec doc 2, Audit records: audit export request).
import { map, nullable, object, optional, refine, string } from '../platform/http/decode.ts';

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

const instant = () =>
  map(
    refine(
      string({ minLength: 1, maxLength: 64 }),
      (s) => (RFC3339.test(s) && !Number.isNaN(Date.parse(s)) ? null : 'an RFC 3339 date-time'),
      'format',
    ),
    (s) => new Date(Date.parse(s)),
  );

const window = object({
  // Absent or null: the whole realm's records.
  organization_id: optional(nullable(string({ minLength: 1, maxLength: 128, printableAscii: true }))),
  from: instant(),
  to: instant(),
});

/** `to` is exclusive, as in GET /audit-events, so it must come after `from`. */
export const decodeAuditExport = refine(
  window,
  (w) => (w.to.getTime() > w.from.getTime() ? null : 'to must be later than from'),
  'invalid',
);
