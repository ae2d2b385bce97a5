// GET of a sign-in transaction (docs/signin.md, Calling steps): its state, with the CSRF token in
// browser mode. Expiry is recorded when it is seen; nothing else changes.
import { problem } from '../platform/http/problem.ts';
import { loadAll, originCheck, requireRealm, requireTxId } from './advance.ts';
import { authenticateCall, type CallCredentials, csrfTokenFor } from './binding.ts';
import { noticeOf } from './federation-rules.ts';
import type { SigninDeps } from './signin.deps.ts';
import { saveTransaction } from './signin.repo.ts';
import { presentState, shownUser } from './state.ts';
import { lockStep } from './step-reads.ts';
import { expire, isExpired } from './transitions.ts';

export async function readState(
  app: SigninDeps,
  realmName: string,
  txId: string,
  creds: CallCredentials,
): Promise<Record<string, unknown>> {
  const realm = await requireRealm(app, realmName);
  requireTxId(txId);
  return app.db.tx(async (q) => {
    const locked = await lockStep(q, realm.id, txId);
    if (!locked) throw problem.notFound('no such transaction');
    const { cookie } = await authenticateCall(
      locked.stored,
      { ...creds, mutating: false },
      originCheck(app, q, realm),
    );
    const now = app.clock.now();
    let tx = locked.stored.tx;
    if (isExpired(tx, now)) {
      tx = expire(tx);
      await saveTransaction(q, tx, now);
    }
    if (!locked.client) throw problem.notFound('the transaction client no longer exists');
    const loaded = await loadAll(
      app,
      q,
      realm,
      tx,
      { client: locked.client, policy: locked.policy },
      !!creds.clientCertificate,
    );
    return presentState({
      tx,
      clientName: loaded.client.name,
      evaluation: tx.status === 'pending' ? loaded.evaluation : null,
      user: shownUser(tx, loaded.facts.user),
      notice: noticeOf(loaded.facts),
      ...(cookie ? { csrfToken: csrfTokenFor(cookie) } : {}),
    });
  });
}
