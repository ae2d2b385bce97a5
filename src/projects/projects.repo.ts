// SQL for projects (migration 0007).
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';
import type { ProjectState } from './project.states.ts';

export interface ProjectRow {
  id: string;
  name: string;
  description: string | null;
  environment: 'development' | 'staging' | 'production';
  state: ProjectState;
  owner_user_id: string | null;
  owner_organization_id: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS =
  'id, name, description, environment, state, owner_user_id, owner_organization_id, created_at, updated_at';

export const findProject = (q: Queryable, realmId: string, id: string) =>
  maybeOne<ProjectRow>(q, `select ${COLUMNS} from projects where realm_id = $1 and id = $2`, [realmId, id]);

export const lockProject = (tx: Tx, realmId: string, id: string) =>
  maybeOne<ProjectRow>(tx, `select ${COLUMNS} from projects where realm_id = $1 and id = $2 for update`, [
    realmId,
    id,
  ]);

/** All projects (orgId undefined) or those one organization owns. */
export const listProjects = (
  q: Queryable,
  realmId: string,
  f: { orgId?: string; state?: string },
  page: { after: string | null; limit: number },
) =>
  many<ProjectRow>(
    q,
    `select ${COLUMNS} from projects
      where realm_id = $1 and ($2::text is null or owner_organization_id = $2) and ($3::text is null or state = $3)
        and ($4::text is null or id > $4)
      order by id limit $5`,
    [realmId, f.orgId ?? null, f.state ?? null, page.after, page.limit + 1],
  );

export interface ProjectValues {
  name: string;
  description: string | null;
  environment: ProjectRow['environment'];
  ownerUserId: string | null;
  ownerOrganizationId: string | null;
}

export async function insertProject(
  tx: Tx,
  realmId: string,
  v: ProjectValues,
  now: Date,
): Promise<ProjectRow> {
  const r = await tx.query<ProjectRow>(
    `insert into projects (realm_id, id, name, description, environment, state, owner_user_id, owner_organization_id,
       created_at, updated_at)
     values ($1, $2, $3, $4, $5, 'active', $6, $7, $8, $8) returning ${COLUMNS}`,
    [
      realmId,
      newId('prj', now.getTime()),
      v.name,
      v.description,
      v.environment,
      v.ownerUserId,
      v.ownerOrganizationId,
      now,
    ],
  );
  return r.rows[0] as ProjectRow;
}

export async function updateProject(
  tx: Tx,
  realmId: string,
  id: string,
  v: Omit<ProjectValues, 'ownerOrganizationId'> & { state: ProjectState },
  now: Date,
): Promise<ProjectRow> {
  const r = await tx.query<ProjectRow>(
    `update projects set name = $3, description = $4, environment = $5, owner_user_id = $6, state = $7, updated_at = $8
      where realm_id = $1 and id = $2 returning ${COLUMNS}`,
    [realmId, id, v.name, v.description, v.environment, v.ownerUserId, v.state, now],
  );
  return r.rows[0] as ProjectRow;
}
