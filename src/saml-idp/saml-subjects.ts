// Who a SAML service provider knows an account by (docs/saml-idp.md): the NameID of a Response,
// and the record that an SSO session signed in to the SP with it, which single logout reads.
import { randomBytes } from 'node:crypto';
import type { Tx } from '../platform/db/db.ts';
import { maybeOne } from '../platform/db/db.ts';
import { NAME_ID_FORMAT_URI } from './saml-xml.ts';

export interface NameId {
  format: string;
  value: string;
}

/** The NameID in the SP's format; null when the account has nothing to fill it (no email). */
export async function nameIdFor(
  tx: Tx,
  realmId: string,
  clientId: string,
  userId: string,
  format: string,
  claims: Record<string, unknown>,
): Promise<NameId | null> {
  if (format === 'email') {
    return typeof claims.email === 'string'
      ? { format: NAME_ID_FORMAT_URI.email, value: claims.email }
      : null;
  }
  if (format === 'transient')
    return { format: NAME_ID_FORMAT_URI.transient, value: `_${randomBytes(20).toString('hex')}` };
  // persistent: one random value per SP and account, kept (saml_subjects, migration 0052).
  await tx.query(
    `insert into saml_subjects (realm_id, client_id, user_id, name_id, created_at)
     values ($1, $2, $3, $4, now()) on conflict (realm_id, client_id, user_id) do nothing`,
    [realmId, clientId, userId, randomBytes(24).toString('base64url')],
  );
  const row = await maybeOne<{ name_id: string }>(
    tx,
    'select name_id from saml_subjects where realm_id = $1 and client_id = $2 and user_id = $3',
    [realmId, clientId, userId],
  );
  return row ? { format: NAME_ID_FORMAT_URI.persistent, value: row.name_id } : null;
}

/** The session signed in to this SP with this NameID (the latest Response's, for a transient one). */
export async function recordParticipant(
  tx: Tx,
  realmId: string,
  sessionId: string,
  clientId: string,
  userId: string,
  nameId: NameId,
  now: Date,
): Promise<void> {
  await tx.query(
    `insert into saml_session_participants (realm_id, session_id, client_id, user_id, name_id, name_id_format,
       created_at) values ($1, $2, $3, $4, $5, $6, $7)
     on conflict (realm_id, session_id, client_id)
     do update set name_id = excluded.name_id, name_id_format = excluded.name_id_format`,
    [realmId, sessionId, clientId, userId, nameId.value, nameId.format, now],
  );
}
