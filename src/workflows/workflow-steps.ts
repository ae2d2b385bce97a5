// One step of a run, done inside the run's step transaction (docs/workflows.md). A bulk-action step
// is the user.bulk code for one account (bulk/user-bulk.apply.ts), with the authority of whoever
// last wrote the workflow, re-checked now (bulk/user-bulk.job.ts); its own transaction joins the
// step's through a savepoint, so a refusal undoes only the step's writes. send_mail queues the
// administrator's text to the account's email address through the notification queue; wait moves
// the run's due time. Each kind is one case below: a new kind (a hook call) adds its case.
import { applyToAccount } from '../bulk/user-bulk.apply.ts';
import { requesterWithAuthority } from '../bulk/user-bulk.job.ts';
import type { Actor, ActorType } from '../kernel/call.ts';
import { enqueueNotification, localeOf } from '../notifications/index.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { savepointDb } from '../platform/db/savepoint-db.ts';
import { tryDecode } from '../platform/http/decode.ts';
import { brandName, findRealmById } from '../realms/index.ts';
import { primaryEmailContact } from '../users/index.ts';
import { bulkRequestOf, isBulkStep, type Step, stepDecoder } from './workflows.decode.ts';
import type { RunRow, WireObject } from './workflows.repo.ts';

export interface StepDeps {
  db: Db;
  keyring: RootKeyring;
}

export interface StepContext {
  tx: Tx;
  run: RunRow;
  runAs: Actor;
  now: Date;
}

/** What a step did: `ok` false stops the run unless the step says to go on. */
export interface StepOutcome {
  ok: boolean;
  outcome: string;
  code?: string;
  detail?: string;
  /** A wait: when the run goes on. */
  resumeAt?: Date;
}

const refused = (code: string, detail: string): StepOutcome => ({
  ok: false,
  outcome: 'refused',
  code,
  detail,
});

async function bulkStep(deps: StepDeps, c: StepContext, s: Step): Promise<StepOutcome> {
  const r = bulkRequestOf(s, c.run.user_id);
  const requester = await requesterWithAuthority(c.tx, c.run.realm_id, c.runAs, r, c.now);
  if (!requester)
    return refused('forbidden', 'whoever last wrote the workflow no longer holds what this step needs');
  const call = { realmId: c.run.realm_id, actor: c.runAs, correlationId: c.run.id, now: c.now };
  const db = savepointDb(c.tx, deps.db.kind);
  const o = await applyToAccount({ db, call, requester }, r, c.run.user_id);
  return o.outcome === 'refused' ? refused(o.code, o.detail) : { ok: true, outcome: o.outcome };
}

async function mailStep(deps: StepDeps, c: StepContext, s: Step): Promise<StepOutcome> {
  const contact = await primaryEmailContact(c.tx, c.run.realm_id, c.run.user_id);
  if (!contact) return refused('no_email', 'the account has no email address');
  const realm = await findRealmById(c.tx, c.run.realm_id);
  if (!realm) return refused('not_found', 'no such realm');
  await enqueueNotification(
    c.tx,
    deps.keyring,
    {
      realmId: c.run.realm_id,
      channel: 'email',
      template: 'workflow_message',
      locale: localeOf(contact.locale),
      to: contact.email,
      vars: { realm: await brandName(c.tx, realm), subject: s.subject ?? '', message: s.message ?? '' },
    },
    c.now,
  );
  return { ok: true, outcome: 'queued' };
}

export async function doStep(deps: StepDeps, c: StepContext, wire: WireObject): Promise<StepOutcome> {
  const decoded = tryDecode(stepDecoder, wire);
  if (!decoded.ok) return refused('invalid_step', 'the stored step does not decode');
  const s = decoded.value;
  if (isBulkStep(s)) return bulkStep(deps, c, s);
  switch (s.kind) {
    case 'send_mail':
      return mailStep(deps, c, s);
    case 'wait':
      return {
        ok: true,
        outcome: 'waited',
        resumeAt: new Date(c.now.getTime() + (s.durationHours ?? 0) * 3_600_000),
      };
    default:
      return refused('invalid_step', `no step kind ${s.kind}`);
  }
}

/** The actor a workflow's steps run as: the type and id stored with its definition. */
export const runAsOf = (type: string, id: string | null): Actor => ({ type: type as ActorType, id });
