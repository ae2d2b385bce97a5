// A realm's uploaded logo (migration 0041): one row per realm, replaced whole.
import type { Queryable, Tx } from '../platform/db/db.ts';

export interface RealmLogo {
  contentType: string;
  body: Buffer;
  /** base64url SHA-256 of the body: the ETag and the cache-busting part of its URL. */
  digest: string;
  updatedAt: Date;
}

interface Row {
  content_type: string;
  body: Uint8Array;
  digest: string;
  updated_at: Date;
}

export async function findRealmLogo(q: Queryable, realmId: string): Promise<RealmLogo | null> {
  const r = await q.query<Row>(
    'select content_type, body, digest, updated_at from realm_logos where realm_id = $1',
    [realmId],
  );
  const row = r.rows[0];
  if (!row) return null;
  return {
    contentType: row.content_type,
    body: Buffer.from(row.body),
    digest: row.digest,
    updatedAt: new Date(row.updated_at),
  };
}

/** The digest of the realm's logo, or null: what the branding answer needs, without the image. */
export async function realmLogoDigest(q: Queryable, realmId: string): Promise<string | null> {
  const r = await q.query<{ digest: string }>('select digest from realm_logos where realm_id = $1', [
    realmId,
  ]);
  return r.rows[0]?.digest ?? null;
}

export async function putRealmLogo(tx: Tx, realmId: string, logo: RealmLogo): Promise<void> {
  await tx.query(
    `insert into realm_logos (realm_id, content_type, body, digest, updated_at) values ($1, $2, $3, $4, $5)
     on conflict (realm_id) do update set content_type = excluded.content_type, body = excluded.body,
       digest = excluded.digest, updated_at = excluded.updated_at`,
    [realmId, logo.contentType, logo.body, logo.digest, logo.updatedAt],
  );
}

/** Removes the logo; false when the realm had none. */
export async function deleteRealmLogo(tx: Tx, realmId: string): Promise<boolean> {
  const r = await tx.query('delete from realm_logos where realm_id = $1', [realmId]);
  return r.rowCount > 0;
}
