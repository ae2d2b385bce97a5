// oidc-provider's PostgreSQL adapter for the benchmark's durable peer (bench/peer-server.mjs with
// ADAPTER=pg): one table, jsonb payloads, a pg Pool on PG_URL with PG_POOL connections. It is the
// reference adapter of the benchmark kit the targets were set with, kept as it is so that the
// durable comparison is the one the targets name.
import pg from 'pg';

const pool = new pg.Pool({
  connectionString: process.env.PG_URL || 'postgres://perf:perf@127.0.0.1:55433/perf',
  max: Number(process.env.PG_POOL || 10),
});
export async function init() {
  await pool.query(`CREATE TABLE IF NOT EXISTS oidc_payloads (id text NOT NULL, type text NOT NULL, payload jsonb NOT NULL,
    grant_id text, user_code text, uid text, expires_at timestamptz, consumed_at timestamptz, PRIMARY KEY (id, type));
    CREATE INDEX IF NOT EXISTS oidc_payloads_grant ON oidc_payloads (grant_id);
    CREATE INDEX IF NOT EXISTS oidc_payloads_uid ON oidc_payloads (uid) WHERE uid IS NOT NULL;
    CREATE INDEX IF NOT EXISTS oidc_payloads_user_code ON oidc_payloads (user_code) WHERE user_code IS NOT NULL;`);
}
const row = (r) =>
  r && (!r.expires_at || r.expires_at > new Date())
    ? { ...r.payload, ...(r.consumed_at ? { consumed: true } : {}) }
    : undefined;
export default class PgAdapter {
  constructor(name) {
    this.name = name;
  }
  async upsert(id, payload, expiresIn) {
    await pool.query({
      name: 'oidc_upsert',
      text: `INSERT INTO oidc_payloads (id, type, payload, grant_id, user_code, uid, expires_at)
      VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::int IS NULL THEN NULL ELSE now() + make_interval(secs => $7::int) END)
      ON CONFLICT (id, type) DO UPDATE SET payload = EXCLUDED.payload, expires_at = EXCLUDED.expires_at`,
      values: [
        id,
        this.name,
        payload,
        payload.grantId ?? null,
        payload.userCode ?? null,
        payload.uid ?? null,
        expiresIn ?? null,
      ],
    });
  }
  async find(id) {
    const { rows } = await pool.query({
      name: 'oidc_find',
      text: 'SELECT payload, expires_at, consumed_at FROM oidc_payloads WHERE id = $1 AND type = $2',
      values: [id, this.name],
    });
    return row(rows[0]);
  }
  async findByUserCode(code) {
    const { rows } = await pool.query(
      'SELECT payload, expires_at, consumed_at FROM oidc_payloads WHERE user_code = $1 AND type = $2',
      [code, this.name],
    );
    return row(rows[0]);
  }
  async findByUid(uid) {
    const { rows } = await pool.query(
      'SELECT payload, expires_at, consumed_at FROM oidc_payloads WHERE uid = $1 AND type = $2',
      [uid, this.name],
    );
    return row(rows[0]);
  }
  async consume(id) {
    await pool.query('UPDATE oidc_payloads SET consumed_at = now() WHERE id = $1 AND type = $2', [
      id,
      this.name,
    ]);
  }
  async destroy(id) {
    await pool.query('DELETE FROM oidc_payloads WHERE id = $1 AND type = $2', [id, this.name]);
  }
  async revokeByGrantId(grantId) {
    await pool.query('DELETE FROM oidc_payloads WHERE grant_id = $1', [grantId]);
  }
}
