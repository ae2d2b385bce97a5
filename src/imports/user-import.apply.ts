// Writing what the plan says to import, in the job's one transaction (docs/migration.md): accounts
// with their identifiers, external ids and password verifiers in their source formats, TOTP
// authenticators, memberships with roles, imported audit history; each account audited as
// user.created and announced by a user.created event with created_via import (spec doc 2, Catalog).
import { insertImportedAuditEvents, recorder } from '../audit/index.ts';
import { insertLink } from '../identity-providers/index.ts';
import type { Actor, Call } from '../kernel/call.ts';
import { insertImportedTotps } from '../mfa/index.ts';
import { type ImportedMembership, insertImportedMemberships } from '../organizations/index.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { encodeImported, type ImportedAccount, insertImportedAccounts } from '../users/index.ts';
import {
  countOutcomes,
  type ImportPlan,
  type PresentedRecord,
  presentRecordPlan,
  type RecordPlan,
} from './user-import.plan.ts';

const PROFILE_ATTRIBUTES = ['givenName', 'familyName', 'locale', 'zoneinfo'] as const;
const WIRE_NAME = {
  givenName: 'given_name',
  familyName: 'family_name',
  locale: 'locale',
  zoneinfo: 'zoneinfo',
};

function accountOf(p: RecordPlan, userId: string, now: Date): ImportedAccount {
  const u = p.record.user;
  const attributes: Record<string, string> = {};
  for (const k of PROFILE_ATTRIBUTES) {
    const v = u[k];
    if (v !== undefined) attributes[WIRE_NAME[k]] = v;
  }
  return {
    id: userId,
    state: u.state ?? 'active',
    displayName: u.displayName ?? null,
    requiredActions: u.requiredActions ?? [],
    attributes,
    adminMetadata: u.adminMetadata ?? {},
    sourceId: p.record.sourceId,
    identifiers: p.record.identifiers.map((i) => ({ ...i, id: newId('idf', now.getTime()) })),
    passwordHash: p.record.verifier ? encodeImported(p.record.verifier) : null,
  };
}

export interface ApplyContext {
  keyring: RootKeyring;
  sourceSystem: string;
  jobId: string;
  /** Who asked for the import, named in its audit records (their actor is the system). */
  requestedBy: Actor;
}

/** Writes the plan's imported records; answers every record's outcome. */
export async function applyImport(
  tx: Tx,
  call: Call,
  plan: ImportPlan,
  c: ApplyContext,
): Promise<{ records: PresentedRecord[]; counts: Record<string, number> }> {
  const { now } = call;
  const created = new Map<RecordPlan, string>();
  for (const p of plan.records) if (p.status === 'imported') created.set(p, newId('usr', now.getTime()));
  const accounts = [...created].map(([p, id]) => accountOf(p, id, now));
  await insertImportedAccounts(tx, call.realmId, c.sourceSystem, accounts, now);
  await insertImportedTotps(
    tx,
    c.keyring,
    call.realmId,
    [...created].flatMap(([p, userId]) => (p.record.totp ? [{ userId, ...p.record.totp }] : [])),
    now,
  );
  const record = recorder(tx, call);
  for (const [p, userId] of created) {
    const u = p.record.user;
    await record.audit('user.created', {
      category: 'identity',
      subject: { type: 'user', id: userId },
      data: {
        created_via: 'import',
        job_id: c.jobId,
        requested_by: c.requestedBy,
        source_system: c.sourceSystem,
        state: u.state ?? 'active',
        required_actions: u.requiredActions ?? [],
        password: p.record.verifier ? p.record.verifier.kind : null,
        totp: p.record.totp !== null,
        linked_identities: p.links.map((l) => l.providerId),
      },
    });
    for (const l of p.links)
      await insertLink(
        tx,
        call.realmId,
        {
          id: newId('lid', now.getTime()),
          userId,
          providerId: l.providerId,
          issuer: l.issuer,
          subject: l.subject,
          provenance: 'import',
          email: l.email,
        },
        now,
      );
    await record.event('user.created', { user_id: userId, created_via: 'import' });
  }
  const memberships: ImportedMembership[] = [...created].flatMap(([p, userId]) =>
    p.memberships.map((m, k) => ({
      orgId: m.orgId,
      userId,
      roleIds: m.roleIds,
      externalId: p.record.memberships[k]?.externalId ?? null,
      metadata: p.record.memberships[k]?.metadata ?? {},
    })),
  );
  await insertImportedMemberships(tx, call, memberships);
  await insertImportedAuditEvents(
    tx,
    call.realmId,
    c.sourceSystem,
    c.jobId,
    [...created].flatMap(([p, userId]) => p.record.auditEvents.map((e) => ({ ...e, userId }))),
    now,
  );
  const records = plan.records.map((p) => presentRecordPlan(p, false, created.get(p) ?? p.userId));
  const counts = countOutcomes(records);
  delete counts.would_import;
  await record.audit('user.import.completed', {
    category: 'identity',
    data: {
      job_id: c.jobId,
      requested_by: c.requestedBy,
      source_system: c.sourceSystem,
      ...counts,
      memberships: memberships.length,
    },
  });
  return { records, counts };
}
