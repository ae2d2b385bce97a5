// A wrong password, code or recovery code: spend failure budget and leave evidence.
import { recordAudit } from '../../audit/index.ts';
import type { Tx } from '../../platform/db/db.ts';
import type { SigninTx } from '../transaction.ts';
import { withFailure } from '../transitions.ts';
import type { StepContext, StepOutcome } from './step.ts';

export async function proofFailed(
  q: Tx,
  t: SigninTx,
  ctx: StepContext,
  factor: string,
): Promise<StepOutcome> {
  const next = withFailure(t);
  ctx.app.metrics.authentications.inc({ outcome: 'failure' });
  await recordAudit(
    q,
    {
      realmId: t.realmId,
      type: next.status === 'failed' ? 'signin.transaction.failed' : 'signin.proof_failed',
      category: 'security',
      outcome: 'failure',
      actor: t.userId ? { type: 'user', id: t.userId } : { type: 'system', id: null },
      ...(t.userId ? { subject: { type: 'user', id: t.userId } } : {}),
      correlationId: ctx.correlationId,
      data: { transaction_id: t.id, factor, failures: next.failures },
    },
    ctx.now,
  );
  return { tx: next };
}
