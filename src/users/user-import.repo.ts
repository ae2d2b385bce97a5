// Accounts created by a user import (docs/migration.md): their external ids, and the rows of a batch
// written with one statement per table, so a batch of 1000 costs a handful of round trips.
import { createHash } from 'node:crypto';
import { many, type Queryable, type Tx } from '../platform/db/db.ts';
import { type IdentifierType, identifierKey } from './identifiers.ts';

/** What an import looks an external id up by: the SHA-256 of the source id (docs/migration.md). */
export const sourceKeyOf = (sourceId: string): string =>
  createHash('sha256').update(sourceId, 'utf8').digest('hex');

export interface ExternalIdRow {
  source_key: string;
  user_id: string;
  /** Set once the account was erased: a later import of it reports skipped_deleted. */
  erased_at: Date | null;
  state: string;
}

export const findExternalIds = (
  q: Queryable,
  realmId: string,
  sourceSystem: string,
  keys: readonly string[],
) =>
  many<ExternalIdRow>(
    q,
    `select x.source_key, x.user_id, x.erased_at, u.state from user_external_ids x
       join users u on u.realm_id = x.realm_id and u.id = x.user_id
      where x.realm_id = $1 and x.source_system = $2 and x.source_key = any($3::text[])`,
    [realmId, sourceSystem, keys],
  );

/** Identifiers among `wanted` that an account holds already, as `type:value_key`. */
export async function takenIdentifiers(
  q: Queryable,
  realmId: string,
  wanted: readonly { type: IdentifierType; value: string }[],
): Promise<Set<string>> {
  if (wanted.length === 0) return new Set();
  const rows = await many<{ type: string; value_key: string }>(
    q,
    `select i.type, i.value_key from user_identifiers i
       join unnest($2::text[], $3::text[]) as w(type, value_key) on w.type = i.type and w.value_key = i.value_key
      where i.realm_id = $1`,
    [realmId, wanted.map((w) => w.type), wanted.map((w) => identifierKey(w.type, w.value))],
  );
  return new Set(rows.map((r) => `${r.type}:${r.value_key}`));
}

export interface ImportedAccount {
  id: string;
  state: 'active' | 'suspended';
  displayName: string | null;
  requiredActions: string[];
  /** Profile attributes (given_name, family_name, locale, zoneinfo). */
  attributes: Record<string, string>;
  adminMetadata: Record<string, unknown>;
  sourceId: string;
  identifiers: { type: IdentifierType; value: string; verified: boolean; primary: boolean; id: string }[];
  /** The canonical imported form (users/imported-verifier.ts), or null without a password. */
  passwordHash: string | null;
}

/** Writes the accounts of a batch: users, identifiers, external ids and password verifiers. */
export async function insertImportedAccounts(
  tx: Tx,
  realmId: string,
  sourceSystem: string,
  accounts: readonly ImportedAccount[],
  now: Date,
): Promise<void> {
  if (accounts.length === 0) return;
  await tx.query(
    `insert into users (realm_id, id, state, display_name, required_actions, created_via, attributes, admin_metadata,
       created_at, updated_at, profile_updated_at)
     select $1, id, state, name, array(select jsonb_array_elements_text(actions)), 'import', attributes, meta, $2, $2, $2
       from unnest($3::text[], $4::text[], $5::text[], $6::jsonb[], $7::jsonb[], $8::jsonb[])
         as t(id, state, name, actions, attributes, meta)`,
    [
      realmId,
      now,
      accounts.map((a) => a.id),
      accounts.map((a) => a.state),
      accounts.map((a) => a.displayName),
      accounts.map((a) => JSON.stringify(a.requiredActions)),
      accounts.map((a) => JSON.stringify(a.attributes)),
      accounts.map((a) => JSON.stringify(a.adminMetadata)),
    ],
  );
  const ids = accounts.flatMap((a) => a.identifiers.map((i) => ({ ...i, userId: a.id })));
  await tx.query(
    `insert into user_identifiers (realm_id, id, user_id, type, value, value_key, verified, verified_at, is_primary,
       created_at)
     select $1, id, user_id, type, value, value_key, verified, case when verified then $2::timestamptz end, prim, $2
       from unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::bool[], $9::bool[])
         as t(id, user_id, type, value, value_key, verified, prim)`,
    [
      realmId,
      now,
      ids.map((i) => i.id),
      ids.map((i) => i.userId),
      ids.map((i) => i.type),
      ids.map((i) => i.value),
      ids.map((i) => identifierKey(i.type, i.value)),
      ids.map((i) => i.verified),
      ids.map((i) => i.primary),
    ],
  );
  await tx.query(
    `insert into user_external_ids (realm_id, source_system, source_key, source_id, user_id, created_at)
     select $1, $2, k, s, u, $3 from unnest($4::text[], $5::text[], $6::text[]) as t(k, s, u)`,
    [
      realmId,
      sourceSystem,
      now,
      accounts.map((a) => sourceKeyOf(a.sourceId)),
      accounts.map((a) => a.sourceId),
      accounts.map((a) => a.id),
    ],
  );
  const withPassword = accounts.filter((a) => a.passwordHash !== null);
  if (withPassword.length > 0)
    await tx.query(
      `insert into password_credentials (realm_id, user_id, hash, pepper_version, created_at)
       select $1, u, h, null, $2 from unnest($3::text[], $4::text[]) as t(u, h)`,
      [realmId, now, withPassword.map((a) => a.id), withPassword.map((a) => a.passwordHash)],
    );
}

/** The external ids of an account, readable ones only (the realm export's external_ids). */
export const externalIdsOf = (q: Queryable, realmId: string, userIds: readonly string[]) =>
  many<{ user_id: string; source_system: string; source_id: string }>(
    q,
    `select user_id, source_system, source_id from user_external_ids
      where realm_id = $1 and user_id = any($2::text[]) and source_id is not null order by source_system, source_id`,
    [realmId, userIds],
  );
