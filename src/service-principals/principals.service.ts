// Service principals (docs/api-roles.md, Service principals): machine identities, behind a
// service client or on their own. Each change writes the row, audit record, outbox event and
// authorization revision in one transaction.
import type { AuditType } from '../audit/audit.types.ts';
import { inChange, type Recorder } from '../audit/index.ts';
import type { Call } from '../kernel/call.ts';
import type { Db, Queryable, Tx } from '../platform/db/db.ts';
import type { FieldError } from '../platform/http/problem.ts';
import { problem } from '../platform/http/problem.ts';
import { type AdminChange, invalid, invalidAll } from '../roles/admin-call.ts';
import { authorizationChanged } from '../roles/authz-revision.ts';
import {
  deleteAssignmentsOfSubject,
  findLiveOrganization,
  findLiveUser,
  liveOrganizationIds,
  lockAuthorization,
} from '../roles/index.ts';
import { announceRemoved } from '../roles/roles.service.ts';
import { revokeKeysOfDeletedPrincipal } from './api-keys.service.ts';
import { nextPrincipalState, type PrincipalAction } from './principal.states.ts';
import type { CreatePrincipalInput, UpdatePrincipalInput } from './principals.decode.ts';
import {
  findPrincipal,
  insertStandalonePrincipal,
  leaveAllGroups,
  lockPrincipal,
  type PrincipalRow,
  setPrincipalState,
  updatePrincipal,
} from './principals.repo.ts';

export async function getPrincipal(q: Queryable, realmId: string, id: string): Promise<PrincipalRow> {
  const p = await findPrincipal(q, realmId, id);
  if (!p) throw problem.notFound('no such service principal');
  return p;
}

/** Every listed organization must exist. */
async function ensureOrganizations(q: Queryable, realmId: string, ids: readonly string[] | null | undefined) {
  if (!ids || ids.length === 0) return;
  const live = await liveOrganizationIds(q, realmId, ids);
  const errors: FieldError[] = [];
  ids.forEach((id, i) => {
    if (!live.has(id))
      errors.push({
        field: `allowed_organization_ids[${i}]`,
        code: 'unknown_organization',
        detail: 'no such organization',
      });
  });
  if (errors.length > 0) throw invalidAll(errors);
}

/**
 * Decision (docs/api-roles.md): a principal an organization owns acts only there unless the body
 * says otherwise; null (any organization) must be asked for explicitly.
 */
const defaultAllowed = (input: CreatePrincipalInput): string[] | null =>
  input.allowedOrganizationIds !== undefined
    ? input.allowedOrganizationIds
    : input.ownerOrganizationId
      ? [input.ownerOrganizationId]
      : null;

const auditPrincipal = (record: Recorder, type: AuditType, id: string, data: Record<string, unknown>) =>
  record.audit(type, { category: 'configuration', target: { type: 'service_principal', id }, data });

export async function createPrincipal(
  db: Db,
  c: AdminChange,
  input: CreatePrincipalInput,
): Promise<PrincipalRow> {
  return inChange(db, c, async (tx, record) => {
    if (input.ownerUserId && !(await findLiveUser(tx, c.realmId, input.ownerUserId)))
      throw invalid('owner_user_id', 'unknown_user', 'no such user');
    if (input.ownerOrganizationId && !(await findLiveOrganization(tx, c.realmId, input.ownerOrganizationId)))
      throw invalid('owner_organization_id', 'unknown_organization', 'no such organization');
    await ensureOrganizations(tx, c.realmId, input.allowedOrganizationIds);
    const id = await insertStandalonePrincipal(
      tx,
      c.realmId,
      {
        name: input.name,
        description: input.description ?? null,
        ownerUserId: input.ownerUserId ?? null,
        ownerOrganizationId: input.ownerOrganizationId ?? null,
        allowedOrganizationIds: defaultAllowed(input),
        isAgent: input.isAgent ?? false,
      },
      c.now,
    );
    await auditPrincipal(record, 'service_principal.created', id, { is_agent: input.isAgent ?? false });
    return getPrincipal(tx, c.realmId, id);
  });
}

export async function changePrincipal(db: Db, c: AdminChange, id: string, input: UpdatePrincipalInput) {
  return inChange(db, c, async (tx, record) => {
    const p = await lockPrincipal(tx, c.realmId, id);
    if (!p) throw problem.notFound('no such service principal');
    await ensureOrganizations(tx, c.realmId, input.allowedOrganizationIds);
    await updatePrincipal(
      tx,
      c.realmId,
      id,
      {
        name: input.name ?? p.name ?? '',
        description: input.description === undefined ? p.description : input.description,
        allowedOrganizationIds:
          input.allowedOrganizationIds === undefined
            ? p.allowed_organization_ids
            : input.allowedOrganizationIds,
        isAgent: input.isAgent ?? p.is_agent,
      },
      c.now,
    );
    await auditPrincipal(record, 'service_principal.updated', id, { changed: Object.keys(input) });
    // Where it may act decides which organization-scope roles count.
    if (input.allowedOrganizationIds !== undefined)
      await authorizationChanged(tx, c.realmId, [{ type: 'service_principal', id }]);
    return getPrincipal(tx, c.realmId, id);
  });
}

export async function changePrincipalState(db: Db, c: AdminChange, id: string, action: PrincipalAction) {
  return inChange(db, c, (tx, record) => changePrincipalStateInTx(tx, record, c, id, action));
}

/** changePrincipalState inside a change already open (an emergency control). */
export async function changePrincipalStateInTx(
  tx: Tx,
  record: Recorder,
  c: Call,
  id: string,
  action: PrincipalAction,
): Promise<PrincipalRow> {
  if (action === 'delete') await lockAuthorization(tx, c.realmId);
  const p = await lockPrincipal(tx, c.realmId, id);
  if (!p) throw problem.notFound('no such service principal');
  const state = nextPrincipalState(p, action);
  await setPrincipalState(tx, c.realmId, id, state, c.now);
  if (state === 'deleted') {
    // A deleted principal holds nothing; its assignments and group places go with it.
    await announceRemoved(record, await deleteAssignmentsOfSubject(tx, c.realmId, 'service_principal', id));
    await leaveAllGroups(tx, c.realmId, id);
    await revokeKeysOfDeletedPrincipal(tx, record, c, id);
  }
  await auditPrincipal(record, 'service_principal.state_changed', id, { from: p.state, state });
  await record.event('service_principal.state_changed', { service_principal_id: id, state });
  await authorizationChanged(tx, c.realmId, [{ type: 'service_principal', id }]);
  return { ...p, state, updated_at: c.now };
}
