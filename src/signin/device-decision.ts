// What a device sign-in decides (docs/oauth-device.md): completion approves the device
// authorization the transaction took; a cancel or a refusal (consent denied, policy denial)
// denies it, so the device's next poll answers access_denied. A transaction that failed on too
// many wrong proofs or expired decides nothing: the code can be entered again while it lives.
import { recorder } from '../audit/index.ts';
import type { Tx } from '../platform/db/db.ts';
import { Problem } from '../platform/http/problem.ts';
import type { RealmRow } from '../realms/index.ts';
import { approveForTransaction, denyForTransaction } from './device-authorizations.repo.ts';
import { stepActor } from './steps/step.ts';
import type { SigninTx } from './transaction.ts';

export async function approveDevice(
  q: Tx,
  realm: RealmRow,
  t: SigninTx,
  sessionId: string,
  grantedScopes: string[],
  now: Date,
  correlationId: string,
): Promise<void> {
  if (!t.userId) throw new Error('device approval without an account');
  const approved = await approveForTransaction(
    q,
    realm.id,
    t.id,
    { userId: t.userId, sessionId, orgId: t.organizationId, grantedScopes },
    now,
  );
  // Expired meanwhile, or another sign-in took the code later: nothing of this one is kept.
  if (!approved)
    throw new Problem(409, 'conflict', 'the device authorization is no longer waiting for this sign-in');
  await recorder(q, { realmId: realm.id, actor: { type: 'user', id: t.userId }, correlationId, now }).audit(
    'device.authorization.approved',
    {
      category: 'security',
      subject: { type: 'user', id: t.userId },
      orgId: t.organizationId,
      data: {
        device_authorization_id: approved.id,
        client_id: approved.client_id,
        transaction_id: t.id,
        session_id: sessionId,
        scopes: grantedScopes,
      },
    },
  );
}

export async function denyDevice(q: Tx, realm: RealmRow, t: SigninTx, now: Date, correlationId: string) {
  const refusedByPerson = t.status === 'cancelled' || (t.status === 'failed' && t.error === 'access_denied');
  if (!refusedByPerson) return;
  const denied = await denyForTransaction(q, realm.id, t.id, t.userId, now);
  if (!denied) return;
  await recorder(q, { realmId: realm.id, actor: stepActor(t.userId), correlationId, now }).audit(
    'device.authorization.denied',
    {
      category: 'security',
      ...(t.userId ? { subject: { type: 'user', id: t.userId } } : {}),
      data: { device_authorization_id: denied.id, client_id: denied.client_id, transaction_id: t.id },
    },
  );
}
