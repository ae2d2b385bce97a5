// SQL of identity-provider connections. Every statement filters on the realm.
import type { Queryable } from '../platform/db/db.ts';
import type {
  Adapter,
  ClaimMapping,
  ConnectionConfig,
  ConnectionRow,
  ConnectionState,
  Kind,
  LinkingPolicy,
} from './connection.ts';

const json = <T>(v: unknown): T => (typeof v === 'string' ? (JSON.parse(v) as T) : (v as T));

const parsed = (r: ConnectionRow): ConnectionRow => ({
  ...r,
  config: json<ConnectionConfig>(r.config),
  claim_mapping: json<ClaimMapping>(r.claim_mapping),
});

export interface NewConnection {
  id: string;
  organizationId: string | null;
  alias: string;
  displayName: string;
  kind: Kind;
  adapter: Adapter;
  state: ConnectionState;
  issuer: string;
  config: ConnectionConfig;
  linkingPolicy: LinkingPolicy;
  jitProvisioning: boolean;
  jitDefaultRoleId: string | null;
  trustUpstreamMfa: boolean;
  claimMapping: ClaimMapping;
  clientSecretSealed: string | null;
  clientSecretRef: string | null;
  ownerUserId: string | null;
  /** SAML: the service-provider certificate; set once, at creation. */
  spCertificate: string | null;
}

/** What a change may set: everything but the identity, the boundary and the owner. */
export type ConnectionChanges = Omit<
  NewConnection,
  'id' | 'organizationId' | 'alias' | 'kind' | 'adapter' | 'ownerUserId' | 'spCertificate'
>;

/** The changeable members in column order (display_name .. client_secret_ref). */
const changeValues = (c: ConnectionChanges): unknown[] => [
  c.displayName,
  c.state,
  c.issuer,
  JSON.stringify(c.config),
  c.linkingPolicy,
  c.jitProvisioning,
  c.jitDefaultRoleId,
  c.trustUpstreamMfa,
  JSON.stringify(c.claimMapping),
  c.clientSecretSealed,
  c.clientSecretRef,
];

export async function insertConnection(
  q: Queryable,
  realmId: string,
  c: NewConnection,
  now: Date,
): Promise<ConnectionRow> {
  const r = await q.query<ConnectionRow>(
    `insert into identity_providers (realm_id, id, organization_id, alias, kind, adapter, owner_user_id,
       display_name, state, issuer, config, linking_policy, jit_provisioning, jit_default_role_id,
       trust_upstream_mfa, claim_mapping, client_secret_sealed, client_secret_ref, created_at, updated_at,
       sp_certificate)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $19, $20)
     returning *`,
    [
      realmId,
      c.id,
      c.organizationId,
      c.alias,
      c.kind,
      c.adapter,
      c.ownerUserId,
      ...changeValues(c),
      now,
      c.spCertificate,
    ],
  );
  return parsed(r.rows[0] as ConnectionRow);
}

export async function findConnection(
  q: Queryable,
  realmId: string,
  id: string,
): Promise<ConnectionRow | null> {
  const r = await q.query<ConnectionRow>('select * from identity_providers where realm_id = $1 and id = $2', [
    realmId,
    id,
  ]);
  return r.rows[0] ? parsed(r.rows[0]) : null;
}

/** By id or by alias (ignoring case), as federation/start names a provider. */
export async function findConnectionByRef(
  q: Queryable,
  realmId: string,
  ref: string,
): Promise<ConnectionRow | null> {
  const r = await q.query<ConnectionRow>(
    `select * from identity_providers where realm_id = $1 and (id = $2 or lower(alias) = lower($2))
      order by (id = $2) desc limit 1`,
    [realmId, ref],
  );
  return r.rows[0] ? parsed(r.rows[0]) : null;
}

export async function lockConnection(
  q: Queryable,
  realmId: string,
  id: string,
): Promise<ConnectionRow | null> {
  const r = await q.query<ConnectionRow>(
    'select * from identity_providers where realm_id = $1 and id = $2 for update',
    [realmId, id],
  );
  return r.rows[0] ? parsed(r.rows[0]) : null;
}

/** A page by id; `organizationId` undefined lists every connection, null realm-wide ones only. */
export async function listConnections(
  q: Queryable,
  realmId: string,
  filter: { organizationId?: string | null; after: string | null; limit: number },
): Promise<ConnectionRow[]> {
  const params: unknown[] = [realmId, filter.after, filter.limit];
  let org = '';
  if (filter.organizationId === null) org = 'and organization_id is null';
  else if (filter.organizationId !== undefined) {
    params.push(filter.organizationId);
    org = 'and organization_id = $4';
  }
  const r = await q.query<ConnectionRow>(
    `select * from identity_providers where realm_id = $1 and ($2::text is null or id > $2) ${org}
      order by id limit $3`,
    params,
  );
  return r.rows.map(parsed);
}

/** Active connections a sign-in may offer: realm-wide ones and those of the given organizations. */
export async function activeConnections(
  q: Queryable,
  realmId: string,
  organizationIds: readonly string[],
): Promise<ConnectionRow[]> {
  const r = await q.query<ConnectionRow>(
    `select * from identity_providers
      where realm_id = $1 and state = 'active'
        and (organization_id is null or organization_id = any($2::text[]))
      order by lower(display_name), id`,
    [realmId, organizationIds],
  );
  return r.rows.map(parsed);
}

export async function updateConnection(
  q: Queryable,
  realmId: string,
  id: string,
  c: ConnectionChanges,
  now: Date,
): Promise<ConnectionRow> {
  const r = await q.query<ConnectionRow>(
    `update identity_providers
        set display_name = $3, state = $4, issuer = $5, config = $6, linking_policy = $7, jit_provisioning = $8,
            jit_default_role_id = $9, trust_upstream_mfa = $10, claim_mapping = $11, client_secret_sealed = $12,
            client_secret_ref = $13, version = version + 1, updated_at = $14
      where realm_id = $1 and id = $2 returning *`,
    [realmId, id, ...changeValues(c), now],
  );
  return parsed(r.rows[0] as ConnectionRow);
}

export async function setConnectionState(
  q: Queryable,
  realmId: string,
  id: string,
  state: ConnectionState,
  now: Date,
): Promise<void> {
  await q.query(
    `update identity_providers set state = $3, version = version + 1, updated_at = $4
      where realm_id = $1 and id = $2 and state <> $3`,
    [realmId, id, state, now],
  );
}

export async function deleteConnection(q: Queryable, realmId: string, id: string): Promise<void> {
  await q.query('delete from identity_providers where realm_id = $1 and id = $2', [realmId, id]);
}
