// SQL for SCIM connectors (migration 0037): a realm's provisioning clients and their verifiers.
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';

export interface ScimConnectorRow {
  id: string;
  name: string;
  /** The organization whose directory it is; null for a realm connector. */
  organization_id: string | null;
  created_at: Date;
  revoked_at: Date | null;
}

const COLUMNS = 'id, name, organization_id, created_at, revoked_at';

export const insertConnector = (
  tx: Tx,
  realmId: string,
  c: { id: string; name: string; secretDigest: string; organizationId: string | null },
  now: Date,
) =>
  tx.query(
    `insert into scim_connectors (realm_id, id, name, secret_digest, organization_id, created_at)
     values ($1, $2, $3, $4, $5, $6)`,
    [realmId, c.id, c.name, c.secretDigest, c.organizationId, now],
  );

export const lockConnector = (tx: Tx, realmId: string, id: string) =>
  maybeOne<ScimConnectorRow>(
    tx,
    `select ${COLUMNS} from scim_connectors where realm_id = $1 and id = $2 for update`,
    [realmId, id],
  );

/** The connector with its verifier and, for an organization's, that organization's state. */
export const findConnectorVerifier = (q: Queryable, realmId: string, id: string) =>
  maybeOne<ScimConnectorRow & { secret_digest: string; organization_state: string | null }>(
    q,
    `select ${COLUMNS}, secret_digest,
       (select o.state from organizations o where o.realm_id = c.realm_id and o.id = c.organization_id)
         as organization_state
       from scim_connectors c where realm_id = $1 and id = $2`,
    [realmId, id],
  );

export const setConnectorRevoked = (tx: Tx, realmId: string, id: string, now: Date) =>
  tx.query(
    'update scim_connectors set revoked_at = $3 where realm_id = $1 and id = $2 and revoked_at is null',
    [realmId, id, now],
  );

/** A page of the realm's connectors (organizationId null) or of one organization's. */
export const listConnectors = (
  q: Queryable,
  realmId: string,
  organizationId: string | null,
  page: { after: string | null; limit: number },
) =>
  many<ScimConnectorRow>(
    q,
    `select ${COLUMNS} from scim_connectors
      where realm_id = $1 and organization_id is not distinct from $4 and ($2::text is null or id > $2)
      order by id limit $3`,
    [realmId, page.after, page.limit + 1, organizationId],
  );
