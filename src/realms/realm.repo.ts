import { maybeOne, type Queryable, type Tx } from '../platform/db/db.ts';

export interface RealmRow {
  id: string;
  name: string;
  display_name: string;
  state: 'active' | 'suspended';
  policy_revision: number;
  created_at: Date;
  /** Kinds with an active hook in the realm (migrations/0055_hooks.sql); absent where not read. */
  hook_kinds?: string[];
}

export const findRealmByName = (q: Queryable, name: string) =>
  maybeOne<RealmRow>(q, 'select * from realms where name = $1', [name]);

export const findRealmById = (q: Queryable, id: string) =>
  maybeOne<RealmRow>(q, 'select * from realms where id = $1', [id]);

export async function insertRealm(
  tx: Tx,
  r: {
    id: string;
    name: string;
    displayName: string;
    policy: Record<string, unknown>;
    actorId: string | null;
  },
  now: Date,
): Promise<RealmRow> {
  const row = await maybeOne<RealmRow>(
    tx,
    `insert into realms (id, name, display_name, state, policy_revision, created_at, updated_at)
     values ($1, $2, $3, 'active', 1, $4, $4)
     on conflict (name) do nothing returning *`,
    [r.id, r.name, r.displayName, now],
  );
  if (!row) throw new RealmExistsError(r.name);
  await tx.query(
    `insert into realm_policy_revisions (realm_id, revision, policy, reason, created_by, created_at)
     values ($1, 1, $2, 'realm created', $3, $4)`,
    [r.id, JSON.stringify(r.policy), r.actorId, now],
  );
  return row;
}

export class RealmExistsError extends Error {
  constructor(realmName: string) {
    super(`realm ${realmName} already exists`);
  }
}
