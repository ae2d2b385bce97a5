// SQL for service principals as the administration API sees them (migrations 0005 and 0007):
// those behind service clients and those created on their own (no client row).
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';

export type PrincipalState = 'active' | 'disabled' | 'deleted';

export interface PrincipalRow {
  id: string;
  name: string | null;
  description: string | null;
  owner_user_id: string | null;
  owner_organization_id: string | null;
  allowed_organization_ids: string[] | null;
  is_agent: boolean;
  state: PrincipalState;
  client_row_id: string | null;
  /** The client_id of the service client behind it, if any. */
  client_id: string | null;
  created_at: Date;
  updated_at: Date;
}

// A principal behind a client shows the client's name until it is given one of its own.
const COLUMNS = `p.id, coalesce(p.name, c.name) as name, p.description, p.owner_user_id, p.owner_organization_id,
  p.allowed_organization_ids, p.is_agent, p.state, p.client_row_id, c.client_id, p.created_at, p.updated_at`;
const FROM = 'service_principals p left join clients c on c.realm_id = p.realm_id and c.id = p.client_row_id';

export const findPrincipal = (q: Queryable, realmId: string, id: string) =>
  maybeOne<PrincipalRow>(
    q,
    `select ${COLUMNS} from ${FROM} where p.realm_id = $1 and p.id = $2 and p.state <> 'deleted'`,
    [realmId, id],
  );

export const lockPrincipal = (tx: Tx, realmId: string, id: string) =>
  maybeOne<PrincipalRow>(
    tx,
    `select ${COLUMNS} from ${FROM} where p.realm_id = $1 and p.id = $2 and p.state <> 'deleted' for update of p`,
    [realmId, id],
  );

export const listPrincipals = (
  q: Queryable,
  realmId: string,
  f: { state?: string; ownerOrganizationId?: string },
  page: { after: string | null; limit: number },
) =>
  many<PrincipalRow>(
    q,
    `select ${COLUMNS} from ${FROM}
      where p.realm_id = $1 and p.state <> 'deleted' and ($2::text is null or p.state = $2)
        and ($3::text is null or p.owner_organization_id = $3) and ($4::text is null or p.id > $4)
      order by p.id limit $5`,
    [realmId, f.state ?? null, f.ownerOrganizationId ?? null, page.after, page.limit + 1],
  );

export interface PrincipalValues {
  name: string;
  description: string | null;
  ownerUserId: string | null;
  ownerOrganizationId: string | null;
  allowedOrganizationIds: string[] | null;
  isAgent: boolean;
}

export async function insertStandalonePrincipal(
  tx: Tx,
  realmId: string,
  v: PrincipalValues,
  now: Date,
): Promise<string> {
  const id = newId('spr', now.getTime());
  await tx.query(
    `insert into service_principals (realm_id, id, client_row_id, state, name, description, owner_user_id,
       owner_organization_id, allowed_organization_ids, is_agent, created_at, updated_at)
     values ($1, $2, null, 'active', $3, $4, $5, $6, $7, $8, $9, $9)`,
    [
      realmId,
      id,
      v.name,
      v.description,
      v.ownerUserId,
      v.ownerOrganizationId,
      v.allowedOrganizationIds,
      v.isAgent,
      now,
    ],
  );
  return id;
}

export async function updatePrincipal(
  tx: Tx,
  realmId: string,
  id: string,
  v: Pick<PrincipalValues, 'name' | 'description' | 'allowedOrganizationIds' | 'isAgent'>,
  now: Date,
): Promise<void> {
  await tx.query(
    `update service_principals set name = $3, description = $4, allowed_organization_ids = $5, is_agent = $6,
       updated_at = $7 where realm_id = $1 and id = $2`,
    [realmId, id, v.name, v.description, v.allowedOrganizationIds, v.isAgent, now],
  );
}

export async function setPrincipalState(
  tx: Tx,
  realmId: string,
  id: string,
  state: PrincipalState,
  now: Date,
) {
  await tx.query(
    'update service_principals set state = $3, updated_at = $4 where realm_id = $1 and id = $2',
    [realmId, id, state, now],
  );
}

export async function leaveAllGroups(tx: Tx, realmId: string, id: string): Promise<void> {
  await tx.query(
    `delete from group_members where realm_id = $1 and subject_type = 'service_principal' and subject_id = $2`,
    [realmId, id],
  );
}
