// POST /user-imports (docs/migration.md): the document is checked whole (400 for its shape, 422
// naming each record's member for its rules), the caller's authority is checked as the job will
// check it again, and then either a dry run answers every record's outcome without writing
// anything, or a user.import job is queued (202 {job_id}; the Idempotency-Key answers the same job)
// with the document sealed beside it.
import { createHash } from 'node:crypto';
import { recorder } from '../audit/index.ts';
import { queueJob } from '../jobs/index.ts';
import type { Call } from '../kernel/call.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Queryable } from '../platform/db/db.ts';
import { decodeBody } from '../platform/http/decode.ts';
import { problem } from '../platform/http/problem.ts';
import { callerAuthority, REALM_CONTEXT } from '../roles/delegation.ts';
import type { Delegator } from '../roles/index.ts';
import { authorityGap, describeGap, documentPermissions, type Holding } from './user-import.authority.ts';
import { type ImportDocument, importDocumentShape, USER_IMPORT_FORMAT } from './user-import.format.ts';
import { documentAad, type SealedImport, userImportJob } from './user-import.job.ts';
import { countOutcomes, planImport, presentRecordPlan } from './user-import.plan.ts';
import { type PreparedRecord, prepareDocument } from './user-import.validate.ts';
import { insertUserImport } from './user-imports.repo.ts';

export interface UserImportRequestDeps {
  db: Db;
  keyring: RootKeyring | null;
  metadataBytes: number;
}

export interface ImportRequest {
  call: Call;
  caller: Delegator;
  body: unknown;
  dryRun: boolean;
  idempotencyKey: string | null;
}

function decodeDocument(
  deps: UserImportRequestDeps,
  body: unknown,
): { doc: ImportDocument; records: PreparedRecord[] } {
  const doc = decodeBody(importDocumentShape(deps.metadataBytes), body);
  // Firebase signer keys are sealed by the job; checking the document needs no seal.
  const prepared = prepareDocument(doc, () => '');
  if (prepared.errors.length > 0)
    throw problem.validation(prepared.errors, 'records of the import are invalid');
  return { doc, records: prepared.records };
}

/** 403 naming what the caller lacks for this document, as the job would refuse it. */
async function requireAuthority(
  q: Queryable,
  r: ImportRequest,
  doc: ImportDocument,
  ceiling: Map<string, Set<string>>,
) {
  const held = async (orgId: string | null): Promise<Holding> => {
    const a = await callerAuthority(
      q,
      r.call.realmId,
      r.caller,
      orgId ? { orgId, projectId: null } : REALM_CONTEXT,
      r.call.now,
    );
    return { permissions: a.permissions, everything: a.everything };
  };
  const gap = await authorityGap(await held(null), documentPermissions(doc), ceiling, held);
  if (gap) throw problem.forbidden(describeGap(gap));
}

export async function dryRunImport(deps: UserImportRequestDeps, r: ImportRequest) {
  const { doc, records } = decodeDocument(deps, r.body);
  const plan = await planImport(deps.db, r.call.realmId, doc.sourceSystem, records, {
    allowOwnerRoles: doc.allowOwnerRoles === true,
  });
  await requireAuthority(deps.db, r, doc, plan.ceiling);
  const presented = plan.records.map((p) => presentRecordPlan(p, true));
  const counts = countOutcomes(presented);
  delete counts.imported;
  return {
    format: USER_IMPORT_FORMAT,
    source_system: doc.sourceSystem,
    dry_run: true,
    counts,
    records: presented,
  };
}

const digestOf = (body: unknown) => createHash('sha256').update(JSON.stringify(body)).digest('hex');

export async function queueImport(
  deps: UserImportRequestDeps,
  r: ImportRequest,
): Promise<{ job_id: string }> {
  const keyring = deps.keyring;
  if (!keyring) throw problem.unavailable('imports need a root key');
  const { doc, records } = decodeDocument(deps, r.body);
  const plan = await planImport(deps.db, r.call.realmId, doc.sourceSystem, records, {
    allowOwnerRoles: doc.allowOwnerRoles === true,
  });
  await requireAuthority(deps.db, r, doc, plan.ceiling);
  return deps.db.tx(async (tx) => {
    const job = await queueJob(tx, userImportJob, {
      realmId: r.call.realmId,
      requester: r.call.actor,
      now: r.call.now,
      idempotencyKey: r.idempotencyKey,
      params: { source_system: doc.sourceSystem, users: doc.users.length, sha256: digestOf(r.body) },
    });
    if (!job.replayed) {
      const payload: SealedImport = { metadata_bytes: deps.metadataBytes, document: r.body };
      const sealed = keyring.encrypt(
        'user-import',
        JSON.stringify(payload),
        documentAad(r.call.realmId, job.id),
      );
      await insertUserImport(tx, r.call.realmId, job.id, sealed, r.call.now);
      await recorder(tx, r.call).audit('user.import.requested', {
        category: 'identity',
        data: {
          job_id: job.id,
          source_system: doc.sourceSystem,
          users: doc.users.length,
          trust_email_verification: doc.trustEmailVerification === true,
          import_totp: doc.importTotp === true,
        },
        reason: doc.verificationReason ?? null,
      });
    }
    return { job_id: job.id };
  });
}
