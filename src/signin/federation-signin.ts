// What an upstream identity does to a sign-in transaction (docs/federation.md, Linking and
// just-in-time accounts), inside the transaction's own database transaction:
//   - linked already: the account it is linked to signs in (factor fed, and fed_mfa when the
//     connection trusts the upstream's MFA and the upstream says it did MFA);
//   - not linked, and the account of this sign-in proved itself already: linked to it;
//   - not linked, nobody proved anything: a new account (just-in-time) when the connection
//     allows it and no account holds the upstream's email address; otherwise the link waits for
//     an existing account to prove itself (link_account), never matched by email alone;
//   - after a local proof while a link waits: the link is made (federation-links.ts).
import { recorder } from '../audit/index.ts';
import type { UpstreamTokens } from '../federation/upstream-client.ts';
import type { UpstreamIdentity } from '../federation/upstream-identity.ts';
import {
  type ConnectionRow,
  effectiveConfig,
  findLinkBySubject,
  type LinkedIdentityRow,
  type PendingIdentity,
  saveSigninFederation,
  storeUpstreamTokens,
  touchLink,
} from '../identity-providers/index.ts';
import type { Call } from '../kernel/call.ts';
import { joinThroughFederation } from '../organizations/index.ts';
import type { RootKeyring } from '../platform/crypto/keyring.ts';
import type { Tx } from '../platform/db/db.ts';
import { authorizationChanged } from '../roles/authz-revision.ts';
import { assignRealmRole } from '../roles/index.ts';
import { createUserInTx, findUserByIdentifier } from '../users/index.ts';
import { link, upstreamFactors, withFactors } from './federation-links.ts';
import { hasPrimary } from './next-actions.ts';
import type { SigninTx } from './transaction.ts';

/** How an upstream identity changed the transaction, for the caller's log and the tests. */
export type FederatedResult = 'signed_in' | 'linked' | 'created' | 'link_pending' | 'refused';

/** The connection's store_tokens: the upstream's tokens kept sealed beside the link. */
async function keepTokens(
  q: Tx,
  call: Call,
  keyring: RootKeyring | null,
  c: ConnectionRow,
  l: LinkedIdentityRow,
  tokens: UpstreamTokens,
): Promise<void> {
  if (!effectiveConfig(c).store_tokens || !keyring) return;
  const aad = `${call.realmId}/${l.id}`;
  await storeUpstreamTokens(
    q,
    call.realmId,
    l,
    {
      accessTokenSealed: keyring.encrypt('upstream-token', tokens.accessToken, aad),
      refreshTokenSealed: tokens.refreshToken
        ? keyring.encrypt('upstream-token', tokens.refreshToken, aad)
        : null,
      scope: tokens.scope,
      expiresAt: tokens.expiresIn === null ? null : new Date(call.now.getTime() + tokens.expiresIn * 1000),
    },
    call.now,
  );
}

/** A new account for the upstream identity, with the connection's role and organization. */
async function createAccount(q: Tx, call: Call, c: ConnectionRow, id: UpstreamIdentity): Promise<string> {
  const user = await createUserInTx(
    q,
    call,
    {
      ...(id.email ? { email: id.email, emailVerified: id.emailVerified } : {}),
      displayName: id.name ?? id.preferredUsername ?? undefined,
      // An address the upstream did not verify is confirmed here before it counts.
      requiredActions: id.email && !id.emailVerified ? ['verify_email'] : [],
      createdVia: 'federation',
    },
    null,
  );
  const roles = c.jit_default_role_id ? [c.jit_default_role_id] : [];
  if (c.organization_id) {
    await joinThroughFederation(q, call, c.organization_id, user.id, roles);
  } else if (c.jit_default_role_id) {
    const assignmentId = await assignRealmRole(
      q,
      {
        realmId: call.realmId,
        roleId: c.jit_default_role_id,
        subjectType: 'user',
        subjectId: user.id,
        source: 'federation',
      },
      call.now,
    );
    await recorder(q, call).event('authorization.role.assigned', {
      subject_id: user.id,
      role_id: c.jit_default_role_id,
      assignment_id: assignmentId,
    });
    await authorizationChanged(q, call.realmId, [{ type: 'user', id: user.id }]);
  }
  return user.id;
}

const pendingOf = (id: UpstreamIdentity): PendingIdentity => ({
  email: id.email,
  emailVerified: id.emailVerified,
  name: id.name,
});

export interface ApplyInput {
  call: Call;
  keyring: RootKeyring | null;
  connection: ConnectionRow;
  identity: UpstreamIdentity;
  tokens: UpstreamTokens;
}

/** Applies a validated upstream identity to the locked, pending transaction. */
export async function applyUpstreamIdentity(
  q: Tx,
  t: SigninTx,
  a: ApplyInput,
): Promise<{ tx: SigninTx; result: FederatedResult }> {
  const { call, connection: c, identity: id } = a;
  const factors = upstreamFactors(c, id.mfa);
  const signedIn = async (l: LinkedIdentityRow, result: FederatedResult) => {
    await keepTokens(q, call, a.keyring, c, l, a.tokens);
    await saveSigninFederation(
      q,
      call.realmId,
      t.id,
      {
        providerId: c.id,
        status: 'authenticated',
        issuer: id.issuer,
        subject: id.subject,
        claims: {},
        upstreamMfa: id.mfa,
        conflict: false,
        linkedIdentityId: l.id,
      },
      call.now,
    );
    return { tx: withFactors({ ...t, userId: l.user_id }, factors), result };
  };

  const existing = await findLinkBySubject(q, call.realmId, c.id, id.issuer, id.subject);
  if (existing) {
    // Another account proved itself in this sign-in: the upstream cannot switch accounts.
    if (hasPrimary(t) && t.userId !== existing.user_id) return { tx: t, result: 'refused' };
    await touchLink(q, call.realmId, existing.id, id.email, call.now);
    return signedIn(existing, 'signed_in');
  }
  if (hasPrimary(t) && t.userId) {
    // The account proved itself in this sign-in already (enterprise SSO after a local factor).
    if (c.linking_policy !== 'prove_existing') return { tx: t, result: 'refused' };
    return signedIn(await link(q, call, c, t.userId, id, 'link', t.id), 'linked');
  }
  const holder = id.email ? await findUserByIdentifier(q, call.realmId, 'email', id.email) : null;
  if (c.jit_provisioning && !holder) {
    const userId = await createAccount(q, call, c, id);
    return signedIn(await link(q, call, c, userId, id, 'jit', t.id), 'created');
  }
  await saveSigninFederation(
    q,
    call.realmId,
    t.id,
    {
      providerId: c.id,
      status: 'link_pending',
      issuer: id.issuer,
      subject: id.subject,
      claims: pendingOf(id),
      upstreamMfa: id.mfa,
      conflict: holder !== null,
      linkedIdentityId: null,
    },
    call.now,
  );
  // Nobody is signed in yet: an identifier typed before does not stand for the upstream identity.
  return { tx: { ...t, userId: null, identifier: null }, result: 'link_pending' };
}

/** The upstream could not be reached: the upstream_unavailable notice, and its evidence. */
export async function noteOutage(
  q: Tx,
  call: Call,
  transactionId: string,
  providerId: string,
  stage: 'start' | 'callback',
  reason: string,
): Promise<void> {
  await saveSigninFederation(
    q,
    call.realmId,
    transactionId,
    {
      providerId,
      status: 'upstream_unavailable',
      issuer: null,
      subject: null,
      claims: {},
      upstreamMfa: false,
      conflict: false,
      linkedIdentityId: null,
    },
    call.now,
  );
  await recorder(q, call).audit('federation.upstream_failed', {
    category: 'security',
    outcome: 'failure',
    target: { type: 'identity_provider', id: providerId },
    data: { transaction_id: transactionId, stage, reason: reason.slice(0, 200) },
  });
}
