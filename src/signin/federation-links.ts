// Links between upstream identities and accounts as a sign-in makes them (docs/federation.md,
// Linking and just-in-time accounts): the link with its evidence, the factors an upstream gives,
// and the link made after a local proof while an upstream identity waits (link_account).
import { recorder } from '../audit/index.ts';
import {
  type ConnectionRow,
  deleteSigninFederation,
  findLinkBySubject,
  findSigninFederation,
  insertLink,
  type LinkedIdentityRow,
  type Provenance,
  saveSigninFederation,
} from '../identity-providers/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import { hasPrimary } from './next-actions.ts';
import type { Factor, SigninTx } from './transaction.ts';
import { withFactor } from './transitions.ts';

/** Local proofs that may link a waiting identity: never an SMS code (spec doc 1, link_account). */
const LINK_PROOFS: readonly Factor[] = ['pwd', 'otp', 'magic_link', 'hwk', 'swk'];

export const upstreamFactors = (c: ConnectionRow, mfa: boolean): Factor[] =>
  c.trust_upstream_mfa && mfa ? ['fed', 'fed_mfa'] : ['fed'];

export const withFactors = (t: SigninTx, factors: readonly Factor[]): SigninTx =>
  factors.reduce((acc, f) => withFactor(acc, f), t);

async function audited(
  q: Tx,
  call: Call,
  link: LinkedIdentityRow,
  c: ConnectionRow,
  transactionId: string,
): Promise<void> {
  await recorder(q, call).audit('federation.identity.linked', {
    category: 'identity',
    subject: { type: 'user', id: link.user_id },
    target: { type: 'identity_provider', id: c.id },
    ...(c.organization_id ? { orgId: c.organization_id } : {}),
    data: { linked_identity_id: link.id, provenance: link.provenance, transaction_id: transactionId },
  });
}

export async function link(
  q: Tx,
  call: Call,
  c: ConnectionRow,
  userId: string,
  id: { issuer: string; subject: string; email: string | null },
  provenance: Provenance,
  transactionId: string,
): Promise<LinkedIdentityRow> {
  const row = await insertLink(
    q,
    call.realmId,
    {
      id: newId('lid', call.now.getTime()),
      userId,
      providerId: c.id,
      issuer: id.issuer,
      subject: id.subject,
      provenance,
      email: id.email,
    },
    call.now,
  );
  await audited(q, call, row, c, transactionId);
  return row;
}

/**
 * After a step: when an upstream identity waits for a link and this step proved an existing
 * account with a local method that may link, the link is made and the upstream factor counts.
 */
export async function linkAfterProof(
  q: Tx,
  call: Call,
  before: SigninTx,
  after: SigninTx,
  connectionOf: (id: string) => Promise<ConnectionRow | null>,
  recorded?: boolean,
): Promise<SigninTx> {
  if (hasPrimary(before) || !after.userId || after.status !== 'pending') return after;
  if (!after.completedFactors.some((f) => LINK_PROOFS.includes(f))) return after;
  // The step's facts said the transaction has no upstream record (a proof step writes none).
  if (recorded === false) return after;
  const pending = await findSigninFederation(q, call.realmId, after.id);
  // Signed in locally after an outage: the notice has served its purpose.
  if (pending?.status === 'upstream_unavailable') await deleteSigninFederation(q, call.realmId, after.id);
  if (pending?.status !== 'link_pending' || !pending.upstream_issuer || !pending.upstream_subject)
    return after;
  const c = await connectionOf(pending.provider_id);
  if (c?.state !== 'active' || c.linking_policy !== 'prove_existing') return after;
  const identity = {
    issuer: pending.upstream_issuer,
    subject: pending.upstream_subject,
    email: 'email' in pending.claims ? pending.claims.email : null,
  };
  // Linked to someone else meanwhile: this proof signs in its own account, without the link.
  if (await findLinkBySubject(q, call.realmId, c.id, identity.issuer, identity.subject)) return after;
  const row = await link(q, call, c, after.userId, identity, 'link', after.id);
  await saveSigninFederation(
    q,
    call.realmId,
    after.id,
    {
      providerId: c.id,
      status: 'authenticated',
      issuer: identity.issuer,
      subject: identity.subject,
      claims: {},
      upstreamMfa: pending.upstream_mfa,
      conflict: false,
      linkedIdentityId: row.id,
    },
    call.now,
  );
  return withFactors(after, upstreamFactors(c, pending.upstream_mfa));
}
