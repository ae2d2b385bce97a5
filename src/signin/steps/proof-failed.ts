// A wrong password, code or recovery code: spend failure budget and leave evidence.
import type { Tx } from '../../platform/db/db.ts';
import type { SigninTx } from '../transaction.ts';
import { withFailure } from '../transitions.ts';
import { type StepContext, type StepOutcome, stepActor, stepRecorder } from './step.ts';

export async function proofFailed(
  q: Tx,
  t: SigninTx,
  ctx: StepContext,
  factor: string,
  /** Why the proof was refused, when the record should say (a refused certificate's reason). */
  reason?: string,
): Promise<StepOutcome> {
  const next = withFailure(t);
  ctx.app.metrics.authentications.inc({ outcome: 'failure' });
  const type = next.status === 'failed' ? 'signin.transaction.failed' : 'signin.proof_failed';
  await stepRecorder(q, t.realmId, ctx, stepActor(t.userId)).audit(type, {
    category: 'security',
    outcome: 'failure',
    ...(t.userId ? { subject: { type: 'user', id: t.userId } } : {}),
    ...(reason ? { reason } : {}),
    data: { transaction_id: t.id, factor, failures: next.failures, ...(reason ? { reason } : {}) },
  });
  return { tx: next };
}
