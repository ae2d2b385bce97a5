// The user.import job (spec doc 2, Jobs and exports; docs/migration.md): queued by POST
// /user-imports with the document sealed beside it, run by the worker. The runner re-checks
// realm.users.import; this function re-checks the rest of the job's authority (trust of verified
// flags, TOTP seeds, the permission of each carried required action, the delegation ceiling of
// each mapped role) before anything is written, then plans and writes the records in the one
// transaction that also marks the job succeeded, storing the per-record report and erasing the
// sealed document.
import { authorityLost, type JobType, lostPermissionError, permanentFailure } from '../jobs/index.ts';
import { type Actor, SYSTEM_ACTOR } from '../kernel/call.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Queryable } from '../platform/db/db.ts';
import { tryDecode } from '../platform/http/decode.ts';
import { standingOf } from '../roles/index.ts';
import { sealFirebaseKey } from '../users/index.ts';
import { applyImport } from './user-import.apply.ts';
import {
  authorityGap,
  describeGap,
  documentPermissions,
  type Holding,
  IMPORT_PERMISSION,
} from './user-import.authority.ts';
import { type ImportDocument, importDocumentShape } from './user-import.format.ts';
import { planImport } from './user-import.plan.ts';
import { prepareDocument } from './user-import.validate.ts';
import { findUserImport, finishUserImport } from './user-imports.repo.ts';

export interface UserImportDeps {
  db: Db;
  keyring: RootKeyring;
}

/** The row binding of a sealed import document. */
export const documentAad = (realmId: string, jobId: string) => `user-import/${realmId}/${jobId}`;

/** What is sealed: the request body as received and the metadata limit it was checked under. */
export interface SealedImport {
  metadata_bytes: number;
  document: unknown;
}

/** The requester's holdings with no session in front of it (unconditional assignments only). */
export async function standingHolding(
  q: Queryable,
  realmId: string,
  requester: Actor,
  orgId: string | null,
  now: Date,
): Promise<Holding> {
  const s = await standingOf(q, realmId, requester, orgId, now);
  return { permissions: s.permissions, everything: s.everything === true };
}

function openDocument(
  deps: UserImportDeps,
  realmId: string,
  jobId: string,
  sealed: string,
): ImportDocument | null {
  const payload = JSON.parse(
    deps.keyring.decrypt('user-import', sealed, documentAad(realmId, jobId)).toString(),
  ) as SealedImport;
  const decoded = tryDecode(importDocumentShape(payload.metadata_bytes), payload.document);
  return decoded.ok ? decoded.value : null;
}

export const userImportJob: JobType<UserImportDeps> = {
  name: 'user.import',
  permission: IMPORT_PERMISSION,
  async run(deps, job) {
    const row = await findUserImport(deps.db, job.realmId, job.id);
    if (!row?.document_sealed) return permanentFailure('the import document is no longer stored');
    const doc = openDocument(deps, job.realmId, job.id, row.document_sealed);
    if (!doc) return permanentFailure('the stored import document does not decode');
    const prepared = prepareDocument(doc, (secret) => sealFirebaseKey(deps.keyring, secret));
    if (prepared.errors.length > 0) return permanentFailure('the stored import document does not validate');
    const options = { allowOwnerRoles: doc.allowOwnerRoles === true };
    const pre = await planImport(deps.db, job.realmId, doc.sourceSystem, prepared.records, options);
    // A requester who lost any of this authority dead-letters the job (spec doc 2, Job states):
    // checked now, and again inside the writing transaction, so a loss mid-run writes nothing.
    const refusal = async (q: Queryable, now: Date): Promise<string | null> => {
      const held = (orgId: string | null) => standingHolding(q, job.realmId, job.requester, orgId, now);
      const gap = await authorityGap(await held(null), documentPermissions(doc), pre.ceiling, held);
      if (!gap) return null;
      return gap.kind === 'permission'
        ? lostPermissionError(gap.permission)
        : `permanent failure: ${describeGap(gap)}`;
    };
    const lost = await refusal(deps.db, job.now);
    if (lost) return authorityLost(lost);
    await job.progress('users', doc.users.length);
    return {
      kind: 'apply',
      authority: (tx, now) => refusal(tx, now),
      async apply(tx, _systemRecorder, now) {
        // Planned again inside the transaction, so what it checked is what it writes against.
        const plan = await planImport(tx, job.realmId, doc.sourceSystem, prepared.records, options);
        // A job's changes are made by the system, the job id as correlation (docs/decisions.md,
        // Jobs); the records name the requester.
        const call = { realmId: job.realmId, actor: SYSTEM_ACTOR, correlationId: job.id, now };
        const report = await applyImport(tx, call, plan, {
          keyring: deps.keyring,
          sourceSystem: doc.sourceSystem,
          jobId: job.id,
          requestedBy: job.requester,
        });
        await finishUserImport(tx, job.realmId, job.id, report, now);
        return report.counts;
      },
    };
  },
};
