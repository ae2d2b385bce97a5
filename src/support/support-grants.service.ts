// Support grants from the support side (docs/support-access.md): creation with its refusals,
// reading and early revocation. Each change is one transaction with its audit record and events;
// a refusal commits its own audit record (signal impersonation_denied) before the 403 leaves.

import type { Actor } from '../audit/audit.types.ts';
import { inChange } from '../audit/index.ts';
import { findClient } from '../clients/index.ts';
import type { Call } from '../kernel/call.ts';
import { TOKEN_EXCHANGE } from '../oauth/grants/token-exchange.grant.ts';
import { userMayActIn } from '../oauth/org-context.ts';
import { maybeOne, type Tx } from '../platform/db/db.ts';
import { Problem, problem } from '../platform/http/problem.ts';
import { newId } from '../platform/ids.ts';
import { findResourceByAudience } from '../resources/index.ts';
import type { ResourceDefinition } from '../resources/resource.ts';
import { effectiveRolesSql, permissionsOfRole, type RoleHolding } from '../roles/effective-roles.ts';
import { BUILTIN_ROLES, isBuiltinPermissionName } from '../roles/permissions.ts';
import {
  findPreference,
  findSupportGrant,
  insertSupportGrant,
  lockSupportGrant,
} from '../support-grants/index.ts';
import { newHandoffCode, type SupportGrantRow } from '../support-grants/support-grant.ts';
import type { SupportDeps } from './support.deps.ts';
import type { CreateGrantInput } from './support-grants.decode.ts';
import { impersonationSettings } from './support-policy.ts';
import { revokeLockedGrant } from './support-revoke.ts';

/** Who acts, for whom the answer is shaped, and when. */
export interface SupportCall extends Call {
  realmName: string;
  actor: Actor & { id: string };
  /** Holds support.impersonate: sees and ends every grant, not only their own. */
  supportStaff: boolean;
  correlationId: string;
}

const PRIVILEGED_ROLE_NAMES = new Set<string>(
  Object.values(BUILTIN_ROLES)
    .filter((r) => r.privileged)
    .map((r) => r.name),
);

type Denial = 'self' | 'protected_account' | 'privileged_account' | 'opted_out' | 'account_not_active';

const DENIAL_DETAIL: Record<Denial, string> = {
  self: 'support access to your own account is not allowed',
  protected_account: 'the account is protected from support access',
  privileged_account: 'the account holds administrative permissions',
  opted_out: 'the account holder has opted out of support access',
  account_not_active: 'the account is not active',
};

const invalid = (field: string, code: string, detail: string) =>
  problem.validation([{ field, code, detail }], detail);

interface TargetFacts {
  state: string;
  protected: boolean;
  roles: RoleHolding[] | null;
}

/**
 * Administrators of the realm are never impersonated: a holder of a privileged built-in role, or
 * of any built-in permission at realm scope (realm., org., support., platform.), counts as one.
 */
function isPrivileged(roles: readonly RoleHolding[]): boolean {
  return roles.some(
    (r) =>
      (r.scope_type === undefined || r.scope_type === 'realm') &&
      ((r.builtin && PRIVILEGED_ROLE_NAMES.has(r.name)) ||
        permissionsOfRole(r).some(isBuiltinPermissionName)),
  );
}

const loadTarget = (tx: Tx, realmId: string, userId: string, now: Date) =>
  maybeOne<TargetFacts>(
    tx,
    `select u.state, u.protected, ${effectiveRolesSql({
      realmId: '$1',
      subjectType: "'user'",
      subjectId: '$2',
      now: '$3',
      orgId: 'null::text',
      projectId: 'null::text',
    })} as roles
       from users u where u.realm_id = $1 and u.id = $2 for update of u`,
    [realmId, userId, now],
  );

/** The resource a grant is for: registered, active, and accepting support access. */
function supportResource(r: ResourceDefinition | null): ResourceDefinition & {
  impersonationPolicy: NonNullable<ResourceDefinition['impersonationPolicy']>;
} {
  if (!r || r.builtin || r.state !== 'active') throw invalid('resource', 'unknown', 'no such resource');
  const policy = r.impersonationPolicy;
  if (!r.impersonationEnabled || r.verificationMode !== 'strict_online' || !policy)
    throw invalid('resource', 'support_access_disabled', 'the resource does not accept support access');
  return { ...r, impersonationPolicy: policy };
}

async function checkSupportClient(tx: Tx, realmId: string, clientId: string, allowed: readonly string[]) {
  if (!allowed.includes(clientId))
    throw invalid('client_id', 'not_allowed', 'the resource does not list this client as a support tool');
  const client = await findClient(tx, realmId, clientId);
  if (
    client?.state !== 'active' ||
    client.token_endpoint_auth_method === 'none' ||
    !client.grant_types.includes(TOKEN_EXCHANGE)
  )
    throw invalid(
      'client_id',
      'not_usable',
      'the support tool must be an active confidential client with token exchange',
    );
}

function checkScopes(input: CreateGrantInput, policy: { allowedScopes: string[]; writeScopes: string[] }) {
  const errors = input.scopes.flatMap((s, i) => {
    const write = policy.writeScopes.includes(s);
    if (!write && !policy.allowedScopes.includes(s))
      return [
        { field: `scopes[${i}]`, code: 'not_allowed', detail: 'not in the resource impersonation policy' },
      ];
    if (write && !input.write)
      return [{ field: `scopes[${i}]`, code: 'write_required', detail: 'a write scope needs write: true' }];
    return [];
  });
  if (errors.length > 0) throw problem.validation(errors);
}

export interface CreatedGrant {
  grant: SupportGrantRow;
  handoffCode: string;
}

export async function createSupportGrant(
  app: SupportDeps,
  call: SupportCall,
  input: CreateGrantInput,
): Promise<CreatedGrant> {
  const ttlMs = input.ttlSeconds * 1000;
  const handoffTtlMs = Math.min(app.config.impersonation.handoffTtlMs, ttlMs);
  const outcome = await inChange(app.db, call, async (tx, record) => {
    const settings = await impersonationSettings(tx, call.realmId);
    if (settings.approval !== 'none') {
      throw new Problem(
        409,
        'conflict',
        `the realm asks for approval "${settings.approval}", which this server does not offer yet`,
      );
    }
    const resource = supportResource(
      await findResourceByAudience(
        tx,
        { id: call.realmId, name: call.realmName },
        app.config.server.publicOrigin,
        input.resource,
      ),
    );
    const policy = resource.impersonationPolicy;
    await checkSupportClient(tx, call.realmId, input.clientId, policy.supportClientIds);
    checkScopes(input, policy);

    const target = await loadTarget(tx, call.realmId, input.userId, call.now);
    if (!target) throw invalid('user_id', 'unknown', 'no such user');
    const denial: Denial | null =
      input.userId === call.actor.id
        ? 'self'
        : target.protected
          ? 'protected_account'
          : isPrivileged(target.roles ?? [])
            ? 'privileged_account'
            : target.state !== 'active'
              ? 'account_not_active'
              : settings.allowCustomerOptOut &&
                  (await findPreference(tx, call.realmId, input.userId)) === false
                ? 'opted_out'
                : null;
    if (denial) {
      await record.audit('support.grant.denied', {
        category: 'security',
        outcome: 'failure',
        subject: { type: 'user', id: input.userId },
        target: { type: 'resource', id: resource.id },
        orgId: input.organizationId,
        signal: 'impersonation_denied',
        reason: denial,
        data: { client_id: input.clientId, resource: resource.audience },
      });
      return { kind: 'denied', denial } as const;
    }

    // Every grant names the organization support acts in: without one, the customer's roles in
    // each of their organizations would count, and doc 2's events could not carry org_id.
    const orgId = input.organizationId;
    if (orgId === undefined)
      throw invalid('organization_id', 'required', 'support access names the customer’s organization');
    if (!(await userMayActIn(tx, call.realmId, orgId, input.userId, call.now)))
      throw invalid(
        'organization_id',
        'membership_inactive',
        'the user is not an active member of this organization',
      );

    const id = newId('sgr', call.now.getTime());
    const handoff = newHandoffCode();
    const expiresAt = new Date(call.now.getTime() + ttlMs);
    await insertSupportGrant(
      tx,
      {
        realmId: call.realmId,
        id,
        actorUserId: call.actor.id,
        targetUserId: input.userId,
        clientId: input.clientId,
        resourceId: resource.id,
        organizationId: orgId,
        scopes: input.scopes,
        write: input.write,
        reason: input.reason,
        handoffDigest: handoff.digest,
        handoffExpiresAt: new Date(call.now.getTime() + handoffTtlMs),
        expiresAt,
      },
      call.now,
    );
    await record.audit('support.grant.created', {
      category: 'security',
      subject: { type: 'user', id: input.userId },
      target: { type: 'support_grant', id },
      orgId,
      signal: 'impersonation_activity',
      reason: input.reason,
      data: {
        client_id: input.clientId,
        resource: resource.audience,
        scopes: input.scopes,
        write: input.write,
        expires_at: expiresAt.toISOString(),
      },
    });
    // The started event is also the customer notification (notify_customer): no mail is sent yet.
    await record.event(
      'support.impersonation.started',
      {
        grant_id: id,
        actor_user_id: call.actor.id,
        target_user_id: input.userId,
        expires_at: expiresAt.toISOString(),
      },
      orgId,
    );
    const grant = await findSupportGrant(tx, call.realmId, id);
    if (!grant) throw new Error('support grant vanished inside its own transaction');
    return { kind: 'created', grant, handoffCode: handoff.code } as const;
  });
  if (outcome.kind === 'denied') throw problem.forbidden(DENIAL_DETAIL[outcome.denial]);
  return { grant: outcome.grant, handoffCode: outcome.handoffCode };
}

/** A grant the caller may see: their own, or any for support staff; others are unknown. */
export async function visibleGrant(
  app: SupportDeps,
  call: SupportCall,
  id: string,
): Promise<SupportGrantRow> {
  const g = await findSupportGrant(app.db, call.realmId, id);
  if (!g || (!call.supportStaff && g.actor_user_id !== call.actor.id))
    throw problem.notFound('no such support grant');
  return g;
}

/** Ends a grant early (actor, or support staff as administrators); ending an ended grant is 409. */
export async function revokeAsSupport(
  app: SupportDeps,
  call: SupportCall,
  id: string,
  reason: string | undefined,
): Promise<SupportGrantRow> {
  return app.db.tx(async (tx) => {
    const g = await lockSupportGrant(tx, call.realmId, id);
    if (!g || (!call.supportStaff && g.actor_user_id !== call.actor.id))
      throw problem.notFound('no such support grant');
    return revokeLockedGrant(tx, call, g, {
      reason: g.actor_user_id === call.actor.id ? 'actor' : 'administrator',
      actor: call.actor,
      subject: { type: 'user', id: g.target_user_id },
      data: reason === undefined ? {} : { note: reason },
    });
  });
}
