// SQL for a realm's certificate trust anchors (docs/certificate-signin.md).
import { many, maybeOne, type Queryable, type Tx } from '../../platform/db/db.ts';

export type MappingSource = 'san_email' | 'san_upn' | 'subject_email' | 'subject_cn';
export type MappingIdentifier = 'email' | 'username';

export interface TrustAnchorRow {
  id: string;
  description: string;
  certificate: string;
  subject: string;
  fingerprint_sha256: string;
  multi_factor: boolean;
  mapping_source: MappingSource;
  mapping_identifier: MappingIdentifier;
  not_after: Date;
  created_at: Date;
}

const COLUMNS = `id, description, certificate, subject, fingerprint_sha256, multi_factor, mapping_source,
  mapping_identifier, not_after, created_at`;

export const listTrustAnchors = (q: Queryable, realmId: string) =>
  many<TrustAnchorRow>(
    q,
    `select ${COLUMNS} from certificate_trust_anchors where realm_id = $1 order by created_at, id`,
    [realmId],
  );

export const findTrustAnchor = (q: Queryable, realmId: string, id: string) =>
  maybeOne<TrustAnchorRow>(
    q,
    `select ${COLUMNS} from certificate_trust_anchors where realm_id = $1 and id = $2`,
    [realmId, id],
  );

/** Whether the realm trusts any CA for certificate sign-in. */
export async function hasTrustAnchors(q: Queryable, realmId: string): Promise<boolean> {
  const r = await q.query<{ found: boolean }>(
    'select exists (select 1 from certificate_trust_anchors where realm_id = $1) as found',
    [realmId],
  );
  return r.rows[0]?.found === true;
}

export async function countTrustAnchors(q: Queryable, realmId: string): Promise<number> {
  const r = await q.query<{ n: number }>(
    'select count(*)::int as n from certificate_trust_anchors where realm_id = $1',
    [realmId],
  );
  return r.rows[0]?.n ?? 0;
}

export const findTrustAnchorByFingerprint = (q: Queryable, realmId: string, fingerprint: string) =>
  maybeOne<{ id: string }>(
    q,
    'select id from certificate_trust_anchors where realm_id = $1 and fingerprint_sha256 = $2',
    [realmId, fingerprint],
  );

export async function insertTrustAnchor(
  q: Tx,
  realmId: string,
  a: Omit<TrustAnchorRow, 'created_at'>,
  now: Date,
): Promise<TrustAnchorRow> {
  const r = await q.query<TrustAnchorRow>(
    `insert into certificate_trust_anchors (realm_id, id, description, certificate, subject, fingerprint_sha256,
       multi_factor, mapping_source, mapping_identifier, not_after, created_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) returning ${COLUMNS}`,
    [
      realmId,
      a.id,
      a.description,
      a.certificate,
      a.subject,
      a.fingerprint_sha256,
      a.multi_factor,
      a.mapping_source,
      a.mapping_identifier,
      a.not_after,
      now,
    ],
  );
  return r.rows[0] as TrustAnchorRow;
}

export async function deleteTrustAnchor(q: Tx, realmId: string, id: string): Promise<TrustAnchorRow | null> {
  const r = await q.query<TrustAnchorRow>(
    `delete from certificate_trust_anchors where realm_id = $1 and id = $2 returning ${COLUMNS}`,
    [realmId, id],
  );
  return r.rows[0] ?? null;
}
