// The user.export job (spec doc 2, Jobs and exports; Personal data export): queued by the user with
// POST /me/exports and run for that user alone, so no permission is re-checked. The file is one
// JSON document, format service.user-export.v1.
import type { JobType } from '../jobs/index.ts';
import { permanentFailure } from '../jobs/index.ts';
import type { Db } from '../platform/db/db.ts';
import * as read from './user-export.repo.ts';

export const USER_EXPORT_FORMAT = 'service.user-export.v1';
/** Security events and imported history records: the newest 500 of each (spec doc 2). */
export const USER_EXPORT_HISTORY_LIMIT = 500;

type Row = Record<string, unknown>;
const iso = (v: unknown): string | null =>
  v === null || v === undefined ? null : new Date(v as Date).toISOString();
const json = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);
const dated = (r: Row, ...keys: string[]): Row => {
  const out: Row = { ...r };
  for (const k of keys) out[k] = iso(r[k]);
  return out;
};

export async function buildUserExport(db: Db, realmId: string, userId: string, now: Date) {
  const account = await read.exportAccount(db, realmId, userId);
  if (!account) return null;
  return {
    format: USER_EXPORT_FORMAT,
    generated_at: now.toISOString(),
    profile: {
      id: account.id,
      state: account.state,
      display_name: account.display_name,
      attributes: json(account.attributes) ?? {},
      required_actions: account.required_actions,
      created_via: account.created_via,
      last_login_at: iso(account.last_login_at),
      created_at: iso(account.created_at),
      updated_at: iso(account.updated_at),
    },
    identifiers: (await read.exportOwnIdentifiers(db, realmId, userId)).map((i) => ({
      type: i.type,
      value: i.value,
      verified: i.verified,
      primary: i.is_primary,
    })),
    memberships: (await read.exportOwnMemberships(db, realmId, userId)).map((m) =>
      dated(m, 'joined_at', 'expires_at', 'created_at'),
    ),
    credentials: (await read.exportCredentialMetadata(db, realmId, userId)).map((c) => ({
      type: c.type,
      created_at: iso(c.created_at),
      ...(c.remaining === null ? {} : { remaining: Number(c.remaining) }),
    })),
    passkeys: (await read.exportPasskeys(db, realmId, userId)).map((p) =>
      dated(p, 'created_at', 'last_used_at'),
    ),
    sessions: (await read.exportActiveSessions(db, realmId, userId, now)).map((s) =>
      dated(s, 'created_at', 'last_seen_at', 'auth_time', 'idle_expires_at', 'absolute_expires_at'),
    ),
    consents: (await read.exportConsents(db, realmId, userId)).map((c) =>
      dated(c, 'created_at', 'updated_at'),
    ),
    terms_acceptances: (await read.exportTermsAcceptances(db, realmId, userId)).map((t) =>
      dated(t, 'accepted_at'),
    ),
    linked_identities: (await read.exportLinkedIdentities(db, realmId, userId)).map((l) =>
      dated(l, 'created_at', 'last_used_at'),
    ),
    security_events: (await read.exportSecurityEvents(db, realmId, userId, USER_EXPORT_HISTORY_LIMIT)).map(
      (e) => dated(e, 'occurred_at'),
    ),
    imported_audit_records: (
      await read.exportImportedAuditRecords(db, realmId, userId, USER_EXPORT_HISTORY_LIMIT)
    ).map((r) => dated(r, 'occurred_at')),
  };
}

export const userExportJob: JobType<{ db: Db }> = {
  name: 'user.export',
  permission: null,
  async run(deps, job) {
    if (job.requester.type !== 'user' || !job.requester.id)
      return permanentFailure('only a user has personal data to export');
    const document = await buildUserExport(deps.db, job.realmId, job.requester.id, job.now);
    if (!document) return permanentFailure('the account no longer exists');
    await job.progress('user', 1);
    return {
      kind: 'file',
      format: 'json',
      body: `${JSON.stringify(document, null, 2)}\n`,
      counts: { sessions: document.sessions.length, security_events: document.security_events.length },
    };
  },
};
