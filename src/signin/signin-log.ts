// Operator log lines for sign-in steps (docs/operations.md, Logging): what each step came to, with
// a reason code. Never the identifier, a password, a code or a token; the realm only by name.
import { Problem } from '../platform/http/problem.ts';
import { loggableId, loggableRealmName } from '../platform/http/request-log.ts';
import type { Logger } from '../platform/log.ts';

export interface StepLogContext {
  log: Logger;
  requestId: string;
  realm: string;
  transactionId: string;
  step: string;
}

/** What a step that answered 200 came to: the transaction's new status and whether a proof failed. */
export interface StepResult {
  status: string;
  error: string | null;
  clientId: string;
  factors: string[];
  proofFailed: boolean;
}

// Realm and transaction come from the URL: logged only when they have the shape of one.
const base = (c: StepLogContext) => ({
  request_id: c.requestId,
  realm: loggableRealmName(c.realm),
  transaction_id: loggableId(c.transactionId),
  step: c.step,
});

export function logStepResult(c: StepLogContext, r: StepResult): void {
  const fields = { ...base(c), client_id: r.clientId };
  if (r.status === 'completed') {
    c.log.info({ ...fields, factors: r.factors }, 'sign-in completed');
  } else if (r.status === 'failed' || r.status === 'expired' || r.status === 'cancelled') {
    c.log.warn(
      { ...fields, outcome: r.status, reason: r.error ?? r.status },
      'sign-in ended without success',
    );
  } else if (r.proofFailed) {
    c.log.warn({ ...fields, reason: 'proof_failed' }, 'sign-in step failed');
  } else {
    c.log.debug(fields, 'sign-in step passed');
  }
}

/** A step refused with a problem (binding, state, body): its problem code; other errors are the mapper's. */
export function logStepRefused(c: StepLogContext, e: unknown): void {
  if (!(e instanceof Problem)) return;
  c.log.warn({ ...base(c), status: e.status, reason: e.code }, 'sign-in step refused');
}
