// The revocation log's records (document 2, "Revocation log record kinds"): the database writes
// them by trigger in the transaction of each change (migrations/0033_revocation_log.sql); this file
// reads them out as JSON lines and reads such lines back, strictly, for restore-reconcile.
import type { Queryable } from '../platform/db/db.ts';

export const RECORD_KINDS = [
  'revocation',
  'tombstone',
  'key_compromised',
  'user_state',
  'invitation_consumed',
  'password_changed',
  'client_credential_revoked',
  'automation_credential_revoked',
  'membership_state',
  'refresh_rotated',
  'refresh_family_revoked',
  'grant_revoked',
  'recovery_code_consumed',
  'recovery_codes_replaced',
  'hotp_counter',
  'initial_access_token',
  'registration_token_rotated',
] as const;
export type RecordKind = (typeof RECORD_KINDS)[number];

/** One line of the log: the order number, the kind, the realm, when, and the kind's identifiers. */
export interface LogRecord {
  seq: number;
  kind: RecordKind;
  realm_id: string;
  logged_at: string;
  record: Record<string, unknown>;
}

/** The records logged at or after `since`, oldest first. */
export async function readLogSince(q: Queryable, since: Date): Promise<LogRecord[]> {
  const r = await q.query<{
    seq: string;
    kind: RecordKind;
    realm_id: string;
    created_at: Date;
    record: unknown;
  }>(
    'select seq, kind, realm_id, created_at, record from revocation_log where created_at >= $1 order by seq',
    [since],
  );
  return r.rows.map((row) => ({
    seq: Number(row.seq),
    kind: row.kind,
    realm_id: row.realm_id,
    logged_at: new Date(row.created_at).toISOString(),
    record: (typeof row.record === 'string' ? JSON.parse(row.record) : row.record) as Record<string, unknown>,
  }));
}

export const toLine = (r: LogRecord): string => JSON.stringify(r);

/** A log file that cannot be re-applied as a whole; names the first bad line. */
export class LogFileError extends Error {
  readonly line: number;
  constructor(line: number, why: string) {
    super(`revocation log line ${line}: ${why}`);
    this.line = line;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function parseLine(text: string, line: number): LogRecord {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    throw new LogFileError(line, 'not a JSON object');
  }
  if (!isObject(v)) throw new LogFileError(line, 'not a JSON object');
  const { seq, kind, realm_id: realmId, logged_at: loggedAt, record } = v;
  if (!Number.isSafeInteger(seq) || (seq as number) < 1)
    throw new LogFileError(line, 'seq is not a positive integer');
  if (typeof kind !== 'string' || !(RECORD_KINDS as readonly string[]).includes(kind))
    throw new LogFileError(line, `unknown kind ${JSON.stringify(kind)}`);
  if (typeof realmId !== 'string' || realmId === '') throw new LogFileError(line, 'realm_id is missing');
  if (typeof loggedAt !== 'string' || Number.isNaN(Date.parse(loggedAt)))
    throw new LogFileError(line, 'logged_at is not a time');
  if (!isObject(record)) throw new LogFileError(line, 'record is not an object');
  return { seq: seq as number, kind: kind as RecordKind, realm_id: realmId, logged_at: loggedAt, record };
}

/**
 * Every record of a log file in log order (time, then seq), each once: appending overlapping windows
 * repeats lines, which is harmless. Any bad line, including a last line without its newline (a copy
 * cut short), fails the whole file.
 */
export function parseLogFile(text: string): LogRecord[] {
  if (text === '') return [];
  const lines = text.split('\n');
  const last = lines.pop();
  if (last !== '') throw new LogFileError(lines.length + 1, 'the last line is truncated (no newline)');
  const seen = new Map<string, LogRecord>();
  lines.forEach((text, i) => {
    if (text.trim() === '') return;
    const r = parseLine(text, i + 1);
    // A restored database numbers again from its backup's seq: the time tells such records apart.
    const key = `${r.logged_at} ${r.seq} ${r.kind}`;
    if (!seen.has(key)) seen.set(key, r);
  });
  return [...seen.values()].sort(
    (a, b) => Date.parse(a.logged_at) - Date.parse(b.logged_at) || a.seq - b.seq,
  );
}
