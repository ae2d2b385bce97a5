// Projects (docs/api-roles.md, Projects): named per owner organization (or realm-wide without
// one), with roles of their own and project-scope assignments that count while active.
import type { AuditType } from '../audit/audit.types.ts';
import { inChange, type Recorder } from '../audit/index.ts';
import type { Db, Queryable } from '../platform/db/db.ts';
import { isUniqueViolation } from '../platform/db/pg-errors.ts';
import { problem } from '../platform/http/problem.ts';
import { type AdminChange, invalid } from '../roles/admin-call.ts';
import { authorizationChanged } from '../roles/authz-revision.ts';
import { findLiveOrganization, findLiveUser } from '../roles/index.ts';
import { nextProjectState, type ProjectAction } from './project.states.ts';
import type { CreateProjectInput, UpdateProjectInput } from './projects.decode.ts';
import { findProject, insertProject, lockProject, type ProjectRow, updateProject } from './projects.repo.ts';

/** Realm routes see every project; an organization's routes only the projects it owns. */
export type ProjectRoute = { kind: 'realm' } | { kind: 'organization'; orgId: string };

const visible = (route: ProjectRoute, p: ProjectRow): boolean =>
  route.kind === 'realm' || p.owner_organization_id === route.orgId;

export async function getProject(
  q: Queryable,
  realmId: string,
  route: ProjectRoute,
  id: string,
): Promise<ProjectRow> {
  const p = await findProject(q, realmId, id);
  if (!p || !visible(route, p)) throw problem.notFound('no such project');
  return p;
}

const nameTaken = () => problem.conflict('a project with this name exists for the same owner organization');

async function ensureOwnerUser(
  q: Queryable,
  realmId: string,
  userId: string | null | undefined,
): Promise<void> {
  if (userId && !(await findLiveUser(q, realmId, userId)))
    throw invalid('owner_user_id', 'unknown_user', 'no such user');
}

const auditProject = (record: Recorder, type: AuditType, p: ProjectRow, data: Record<string, unknown>) =>
  record.audit(type, {
    category: 'configuration',
    target: { type: 'project', id: p.id },
    orgId: p.owner_organization_id,
    data,
  });

export async function createProject(db: Db, c: AdminChange, route: ProjectRoute, input: CreateProjectInput) {
  return inChange(db, c, async (tx, record) => {
    let orgId = input.ownerOrganizationId ?? null;
    if (route.kind === 'organization') {
      if (orgId !== null && orgId !== route.orgId)
        throw invalid(
          'owner_organization_id',
          'not_allowed',
          'projects created here belong to this organization',
        );
      orgId = route.orgId;
    } else if (orgId !== null && !(await findLiveOrganization(tx, c.realmId, orgId))) {
      throw invalid('owner_organization_id', 'unknown_organization', 'no such organization');
    }
    await ensureOwnerUser(tx, c.realmId, input.ownerUserId);
    let p: ProjectRow;
    try {
      p = await insertProject(
        tx,
        c.realmId,
        {
          name: input.name,
          description: input.description ?? null,
          environment: input.environment ?? 'development',
          ownerUserId: input.ownerUserId ?? null,
          ownerOrganizationId: orgId,
        },
        c.now,
      );
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken();
      throw e;
    }
    await auditProject(record, 'project.created', p, { name: p.name, environment: p.environment });
    return p;
  });
}

export async function changeProject(
  db: Db,
  c: AdminChange,
  route: ProjectRoute,
  id: string,
  input: UpdateProjectInput,
) {
  return inChange(db, c, async (tx, record) => {
    const p = await lockProject(tx, c.realmId, id);
    if (!p || !visible(route, p)) throw problem.notFound('no such project');
    await ensureOwnerUser(tx, c.realmId, input.ownerUserId);
    let updated: ProjectRow;
    try {
      updated = await updateProject(
        tx,
        c.realmId,
        id,
        {
          name: input.name ?? p.name,
          description: input.description === undefined ? p.description : input.description,
          environment: input.environment ?? p.environment,
          ownerUserId: input.ownerUserId === undefined ? p.owner_user_id : input.ownerUserId,
          state: p.state,
        },
        c.now,
      );
    } catch (e) {
      if (isUniqueViolation(e)) throw nameTaken();
      throw e;
    }
    await auditProject(record, 'project.updated', updated, { changed: Object.keys(input) });
    return updated;
  });
}

export async function changeProjectState(
  db: Db,
  c: AdminChange,
  route: ProjectRoute,
  id: string,
  action: ProjectAction,
) {
  return inChange(db, c, async (tx, record) => {
    const p = await lockProject(tx, c.realmId, id);
    if (!p || !visible(route, p)) throw problem.notFound('no such project');
    const state = nextProjectState(p.state, action);
    const updated = await updateProject(
      tx,
      c.realmId,
      id,
      {
        name: p.name,
        description: p.description,
        environment: p.environment,
        ownerUserId: p.owner_user_id,
        state,
      },
      c.now,
    );
    await auditProject(record, 'project.state_changed', updated, { from: p.state, state });
    // Project-scope roles count only while the project is active.
    await authorizationChanged(tx, c.realmId);
    return updated;
  });
}
