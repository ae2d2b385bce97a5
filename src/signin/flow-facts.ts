// Loads what the authentication-flow rules look at for a transaction whose account is known.
import type { Queryable, Tx } from '../platform/db/db.ts';
import type { RealmPolicy } from '../realms/index.ts';
import { evaluateFlow, type FlowOutcome, flowRules, flowSetting } from './flow-rules.ts';
import { findFlowState, noteNetwork } from './flow-state.repo.ts';
import type { SigninTx } from './transaction.ts';

export interface FlowFacts {
  outcome: FlowOutcome | null;
  challengePassed: boolean;
  /** authentication_flow.email_code_alternative: a challenge may be answered with an emailed code. */
  emailCode: boolean;
}

export async function loadFlowFacts(
  q: Queryable,
  t: SigninTx,
  policy: RealmPolicy,
  rememberedDevice: boolean,
  now: Date,
): Promise<FlowFacts | undefined> {
  const rules = flowRules(policy);
  if (rules.length === 0 || !t.userId) return undefined;
  const state = await findFlowState(q, t.realmId, t.id);
  const r = await q.query<{
    created_at: Date;
    is_guest: boolean;
    protected: boolean;
    created_via: string;
    email: string | null;
  }>(
    `select u.created_at, u.is_guest, u.protected, u.created_via,
            (select value from user_identifiers i where i.realm_id = u.realm_id and i.user_id = u.id
              and i.type = 'email' order by i.is_primary desc, i.created_at limit 1) as email
       from users u where u.realm_id = $1 and u.id = $2`,
    [t.realmId, t.userId],
  );
  const u = r.rows[0];
  const outcome = evaluateFlow(rules, {
    clientId: t.clientId,
    organization: t.organizationId ?? t.organization,
    ip: state.network,
    newDevice: !rememberedDevice,
    accountCreatedAt: u ? new Date(u.created_at) : null,
    attributes: {
      is_guest: u?.is_guest ?? null,
      protected: u?.protected ?? null,
      created_via: u?.created_via ?? null,
      email_domain: u?.email ? (u.email.split('@').pop()?.toLowerCase() ?? null) : null,
    },
    now,
  });
  return {
    outcome,
    challengePassed: state.challengePassed,
    emailCode: flowSetting(policy, 'email_code_alternative') === true,
  };
}

/** Keeps the caller's address on the transaction when the realm has flow rules; true if noted. */
export async function noteCallerNetwork(
  q: Tx,
  t: SigninTx,
  policy: RealmPolicy,
  ip: string | null | undefined,
) {
  if (!ip || flowRules(policy).length === 0) return false;
  await noteNetwork(q, t.realmId, t.id, ip);
  return true;
}
