// SQL for service principals (migration 0005): the subject of a service client's
// client_credentials tokens, one per service client, living and dying with it.
import { maybeOne, type Tx } from '../platform/db/db.ts';
import { newId } from '../platform/ids.ts';

export type ServicePrincipalState = 'active' | 'disabled';

export interface ServicePrincipalRow {
  realm_id: string;
  id: string;
  client_row_id: string;
  state: ServicePrincipalState;
  authz_version: number;
  created_at: Date;
  updated_at: Date;
}

export async function insertServicePrincipal(
  tx: Tx,
  realmId: string,
  clientRowId: string,
  now: Date,
): Promise<ServicePrincipalRow> {
  const r = await tx.query<ServicePrincipalRow>(
    `insert into service_principals (realm_id, id, client_row_id, state, created_at, updated_at)
     values ($1, $2, $3, 'active', $4, $4) returning *`,
    [realmId, newId('spr', now.getTime()), clientRowId, now],
  );
  return r.rows[0] as ServicePrincipalRow;
}

/** Sets the principal of a client to `state`; null when it has none or is already in that state. */
export const updateServicePrincipalState = (
  tx: Tx,
  realmId: string,
  clientRowId: string,
  state: ServicePrincipalState,
  now: Date,
) =>
  maybeOne<ServicePrincipalRow>(
    tx,
    `update service_principals set state = $3, updated_at = $4
     where realm_id = $1 and client_row_id = $2 and state <> $3 returning *`,
    [realmId, clientRowId, state, now],
  );
