// Linked identities of an account (doc 2, Keys and emergency controls: DELETE
// /users/{user}/linked-identities/{id}; docs/federation.md, Linked identities): listed for the
// account's owner and its administrators, and removed with the upstream tokens kept for them,
// unless the link is the last way the account can sign in (409 last_sign_in_method).
import { inChange } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import { listPasskeys } from '../mfa/index.ts';
import type { Db, Queryable, Tx } from '../platform/db/db.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import { currentPolicy, policyValue } from '../realms/index.ts';
import { findPasswordVerifier, lockUser, primaryEmail } from '../users/index.ts';
import {
  deleteLink,
  type LinkedIdentityView,
  listLinksOfUser,
  lockLinkOfUser,
} from './linked-identities.repo.ts';

export async function listLinkedIdentities(
  q: Queryable,
  realmId: string,
  userId: string,
): Promise<LinkedIdentityView[]> {
  return listLinksOfUser(q, realmId, userId);
}

/**
 * Is there another way for the account to sign in once `linkId` is gone: another link through an
 * active connection, a password, a passkey, or an emailed code or link, as the realm allows them?
 */
async function otherWayIn(q: Tx, realmId: string, userId: string, linkId: string): Promise<boolean> {
  const links = await listLinksOfUser(q, realmId, userId);
  if (links.some((l) => l.id !== linkId && l.provider_state === 'active')) return true;
  const policy = await currentPolicy(q, realmId);
  const login = (m: string) => policyValue(policy, 'login', m) === true;
  if (policyValue(policy, 'login', 'password') !== false && (await findPasswordVerifier(q, realmId, userId)))
    return true;
  if (login('passkeys') && (await listPasskeys(q, realmId, userId)).length > 0) return true;
  return (login('email_otp') || login('magic_link')) && (await primaryEmail(q, realmId, userId)) !== null;
}

/** Removes one link of the account; the caller has checked who may. */
export async function unlinkIdentity(db: Db, call: Call, userId: string, linkId: string): Promise<void> {
  await inChange(db, call, async (tx, record) => {
    // One removal at a time per account, so two cannot each leave the other as "not the last".
    if (!(await lockUser(tx, call.realmId, userId))) throw problem.notFound('no such user');
    const link = linkId.includes('\0') ? null : await lockLinkOfUser(tx, call.realmId, userId, linkId);
    if (!link) throw problem.notFound('no such linked identity');
    if (!(await otherWayIn(tx, call.realmId, userId, linkId)))
      throw new Problem(
        409,
        'last_sign_in_method',
        'this linked identity is the last way the account can sign in',
      );
    await deleteLink(tx, call.realmId, link.id);
    await record.audit('federation.identity.unlinked', {
      category: 'identity',
      subject: { type: 'user', id: userId },
      target: { type: 'identity_provider', id: link.provider_id },
      data: { linked_identity_id: link.id, provenance: link.provenance },
    });
  });
}
