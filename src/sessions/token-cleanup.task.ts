// Worker task tokens.cleanup (spec doc 2, "Data lifecycle and retention" 3): ended sessions,
// grants, refresh families and opaque tokens go privacy.session_retention after they ended, at
// most a batch of each per run; revoked token ids once the token would have expired anyway;
// client assertion ids once they expired.
import { deleteExpiredAssertionJtis } from '../clients/index.ts';
import type { TaskReport } from '../kernel/task.ts';
import type { Db } from '../platform/db/db.ts';

const BATCH = 1000;

export async function cleanupTokens(
  deps: { db: Db; sessionRetentionMs: number },
  now: Date,
): Promise<TaskReport> {
  const before = new Date(now.getTime() - deps.sessionRetentionMs);
  const { db } = deps;
  const revocations = await db.query(
    `delete from token_revocations where (realm_id, jti) in (
       select realm_id, jti from token_revocations where expires_at < $1 limit ${BATCH})`,
    [now],
  );
  const opaque = await db.query(
    `delete from opaque_access_tokens where (realm_id, token_digest) in (
       select realm_id, token_digest from opaque_access_tokens
        where least(expires_at, coalesce(revoked_at, expires_at)) < $1 limit ${BATCH})`,
    [before],
  );
  // A family ends when revoked or past either expiry; its tokens go with it.
  const families = await db.tx(async (tx) => {
    const ended = await tx.query<{ realm_id: string; id: string }>(
      `select realm_id, id from refresh_families
        where least(absolute_expires_at, idle_expires_at, coalesce(revoked_at, absolute_expires_at)) < $1
        limit ${BATCH}`,
      [before],
    );
    if (ended.rows.length === 0) return 0;
    const realms = ended.rows.map((r) => r.realm_id);
    const ids = ended.rows.map((r) => r.id);
    const pairs = 'select * from unnest($1::text[], $2::text[]) as e(realm_id, id)';
    await tx.query(
      `delete from refresh_tokens t using (${pairs}) e where t.realm_id = e.realm_id and t.family_id = e.id`,
      [realms, ids],
    );
    const r = await tx.query(
      `delete from refresh_families f using (${pairs}) e where f.realm_id = e.realm_id and f.id = e.id`,
      [realms, ids],
    );
    return r.rowCount;
  });
  const grants = await db.query(
    `delete from oauth_grants where (realm_id, id) in (
       select g.realm_id, g.id from oauth_grants g
        where g.revoked_at < $1 and not exists (
          select 1 from refresh_families f where f.realm_id = g.realm_id and f.grant_id = g.id)
        limit ${BATCH})`,
    [before],
  );
  const sessions = await db.query(
    `delete from sessions where (realm_id, id) in (
       select realm_id, id from sessions
        where least(absolute_expires_at, idle_expires_at, coalesce(revoked_at, absolute_expires_at)) < $1
        limit ${BATCH})`,
    [before],
  );
  const assertions = await deleteExpiredAssertionJtis(db, now, BATCH);
  return {
    revocations: revocations.rowCount,
    opaque_tokens: opaque.rowCount,
    refresh_families: families,
    grants: grants.rowCount,
    sessions: sessions.rowCount,
    assertion_ids: assertions,
  };
}
