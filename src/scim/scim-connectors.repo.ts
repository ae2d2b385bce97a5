// SQL for SCIM connectors (migration 0037): a realm's provisioning clients and their verifiers.
import { many, maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';

export interface ScimConnectorRow {
  id: string;
  name: string;
  created_at: Date;
  revoked_at: Date | null;
}

const COLUMNS = 'id, name, created_at, revoked_at';

export const insertConnector = (
  tx: Tx,
  realmId: string,
  c: { id: string; name: string; secretDigest: string },
  now: Date,
) =>
  tx.query(
    `insert into scim_connectors (realm_id, id, name, secret_digest, created_at) values ($1, $2, $3, $4, $5)`,
    [realmId, c.id, c.name, c.secretDigest, now],
  );

export const lockConnector = (tx: Tx, realmId: string, id: string) =>
  maybeOne<ScimConnectorRow>(
    tx,
    `select ${COLUMNS} from scim_connectors where realm_id = $1 and id = $2 for update`,
    [realmId, id],
  );

export const findConnectorVerifier = (q: Queryable, realmId: string, id: string) =>
  maybeOne<ScimConnectorRow & { secret_digest: string }>(
    q,
    `select ${COLUMNS}, secret_digest from scim_connectors where realm_id = $1 and id = $2`,
    [realmId, id],
  );

export const setConnectorRevoked = (tx: Tx, realmId: string, id: string, now: Date) =>
  tx.query(
    'update scim_connectors set revoked_at = $3 where realm_id = $1 and id = $2 and revoked_at is null',
    [realmId, id, now],
  );

export const listConnectors = (
  q: Queryable,
  realmId: string,
  page: { after: string | null; limit: number },
) =>
  many<ScimConnectorRow>(
    q,
    `select ${COLUMNS} from scim_connectors
      where realm_id = $1 and ($2::text is null or id > $2) order by id limit $3`,
    [realmId, page.after, page.limit + 1],
  );
