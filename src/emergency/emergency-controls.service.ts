// Emergency controls (spec doc 2, "Keys and emergency controls"; docs/emergency.md): one request
// turns a target off (or back on) through the same state change its own API makes, so every
// path that honours that state honours the control, and records an audit event of category
// emergency carrying the emergency_action signal, all in one transaction.
import { inChange, type Recorder } from '../audit/index.ts';
import { GRANT, setClientStateInTx } from '../clients/index.ts';
import { setHookStateInTx } from '../hooks/index.ts';
import { setConnectionStateInTx } from '../identity-providers/index.ts';
import type { Call } from '../kernel/call.ts';
import { changeOrganizationStateInTx, findOrganization } from '../organizations/index.ts';
import type { Db, Tx } from '../platform/db/db.ts';
import { problem } from '../platform/http/problem.ts';
import { changePrincipalStateInTx, getPrincipal } from '../service-principals/principals.service.ts';
import { setSubscriptionStateInTx } from '../webhooks/index.ts';
import type { EmergencyControl, EmergencyTargetType } from './emergency.decode.ts';
import { deleteGrantTypeControl, insertGrantTypeControl } from './emergency-controls.repo.ts';
import type { GrantTypeControls } from './grant-type-controls.ts';

export interface EmergencyDeps {
  db: Db;
  grantTypeControls: GrantTypeControls;
  /** Realm rows carry the kinds of hooks in use: forgotten after a hook control. */
  realms: { forget(name?: string): void };
}

/** The target's state after the control, and whether the control changed it. */
export interface ControlOutcome {
  state: string;
  changed: boolean;
}

type Apply = (tx: Tx, record: Recorder, call: Call, c: EmergencyControl) => Promise<ControlOutcome>;

const KNOWN_GRANT_TYPES: ReadonlySet<string> = new Set(Object.values(GRANT));

const APPLY: Record<EmergencyTargetType, Apply> = {
  // A disabled connection is offered to no sign-in and its callbacks are refused.
  identity_provider: async (tx, record, call, c) => {
    const state = c.action === 'disable' ? 'disabled' : 'active';
    const before = await setConnectionStateInTx(tx, record, call, c.targetId, state);
    return { state, changed: before !== state };
  },
  // A disabled hook is called at none of its points (docs/hooks.md).
  hook: async (tx, record, call, c) => {
    const state = c.action === 'disable' ? 'disabled' : 'active';
    const before = await setHookStateInTx(tx, record, call, c.targetId, state);
    return { state, changed: before !== state };
  },
  client: async (tx, record, call, c) => {
    const state = c.action === 'disable' ? 'disabled' : 'active';
    const before = await setClientStateInTx(tx, record, call, c.targetId, state);
    return { state, changed: before !== state };
  },
  service_principal: async (tx, record, call, c) => {
    const state = c.action === 'disable' ? 'disabled' : 'active';
    const current = await getPrincipal(tx, call.realmId, c.targetId);
    if (current.state === state) return { state, changed: false };
    const after = await changePrincipalStateInTx(
      tx,
      record,
      call,
      c.targetId,
      c.action === 'disable' ? 'disable' : 'enable',
    );
    return { state: after.state, changed: true };
  },
  organization: async (tx, record, call, c) => {
    const state = c.action === 'disable' ? 'suspended' : 'active';
    const current = await findOrganization(tx, call.realmId, c.targetId);
    if (!current) throw problem.notFound('no such organization');
    if (current.state === state) return { state, changed: false };
    const change = c.action === 'disable' ? 'suspend' : 'reactivate';
    const after = await changeOrganizationStateInTx(tx, record, call, c.targetId, change, c.reason);
    return { state: after.state, changed: true };
  },
  webhook: async (tx, record, call, c) => {
    const state = c.action === 'pause' ? 'paused' : c.action === 'disable' ? 'disabled' : 'active';
    const before = await setSubscriptionStateInTx(tx, record, call, c.targetId, state);
    return { state, changed: before !== state };
  },
  grant_type: async (tx, _record, call, c) => {
    if (!KNOWN_GRANT_TYPES.has(c.targetId))
      throw problem.validation([{ field: 'target_id', code: 'unknown_grant_type' }]);
    const changed =
      c.action === 'disable'
        ? await insertGrantTypeControl(tx, call.realmId, c.targetId, c.reason, call.actor, call.now)
        : await deleteGrantTypeControl(tx, call.realmId, c.targetId);
    return { state: c.action === 'disable' ? 'disabled' : 'enabled', changed };
  },
};

export async function applyEmergencyControl(
  deps: EmergencyDeps,
  call: Call,
  control: EmergencyControl,
): Promise<ControlOutcome> {
  const outcome = await inChange(deps.db, call, async (tx, record) => {
    const result = await APPLY[control.targetType](tx, record, call, control);
    // Recorded even when the target was already in that state: the decision is evidence too.
    await record.audit('emergency.control.applied', {
      category: 'emergency',
      signal: 'emergency_action',
      target: { type: control.targetType, id: control.targetId },
      reason: control.reason,
      data: { action: control.action, state: result.state, changed: result.changed },
    });
    return result;
  });
  if (control.targetType === 'grant_type') deps.grantTypeControls.forget(call.realmId);
  if (control.targetType === 'hook') deps.realms.forget();
  return outcome;
}
