// The introspection scenario's tokens: user access tokens for INTROSPECT_AUDIENCE, each bound to a
// live seeded session of a distinct user and to a client holding a live grant of that user, so that
// introspection runs every live check (client, resource, revoked id, user state, account-wide
// revocation, session, grant, introspector) and every one passes. They are signed with
// signAccessToken and the realm's active key from the key store, under the server's issuer (the
// runner calls this with the server's port), exactly as the token endpoint signs them; going
// through the endpoint would need one sign-in, i.e. one Argon2id hash, per token.

import { signAccessToken } from '../src/access/access-token.ts';
import { issuerOf } from '../src/kernel/audiences.ts';
import type { AppContext } from '../src/main/context.ts';
import { createContext } from '../src/main/context.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { createLogger } from '../src/platform/log.ts';
import { benchConfig, INTROSPECT_AUDIENCE, REALM } from './common.ts';

interface Pick {
  realm_id: string;
  session_id: string;
  user_id: string;
  auth_time: Date;
  client_id: string;
}

export async function mintIntrospectionTokens(o: {
  databaseUrl: string;
  rootKeyFile: string;
  port: number;
  count: number;
}): Promise<string[]> {
  const config = benchConfig({ databaseUrl: o.databaseUrl, rootKeyFile: o.rootKeyFile, port: o.port });
  const db = openPostgres({
    url: o.databaseUrl,
    maxConns: 2,
    statementTimeoutMs: 60_000,
    applicationName: 'bench-tokens',
  });
  try {
    const ctx: AppContext = await createContext(config, { db, env: {}, log: createLogger('silent') });
    // One live session per user, and that user's grant to a web client granted the audience.
    const picks = await db.query<Pick>(
      `select distinct on (s.user_id) s.realm_id, s.id as session_id, s.user_id, s.auth_time, g.client_id
         from realms r
         join sessions s on s.realm_id = r.id
         join oauth_grants g on g.realm_id = s.realm_id and g.user_id = s.user_id and g.revoked_at is null
        where r.name = $1 and s.revoked_at is null and s.idle_expires_at > now() + interval '20 minutes'
          and s.absolute_expires_at > now() + interval '1 hour' and $2 = any(g.resources)
        order by s.user_id, g.client_id
        limit $3`,
      [REALM, INTROSPECT_AUDIENCE, o.count],
    );
    const first = picks.rows[0];
    if (!first) throw new Error('no live sessions with grants to mint introspection tokens for');
    const signer = await ctx.keyStore.activeSigner(first.realm_id);
    if (!signer) throw new Error(`realm ${REALM} has no usable signing key`);
    const issuer = issuerOf(config.server.publicOrigin, REALM);
    const now = new Date();
    const tokens: string[] = [];
    for (const p of picks.rows) {
      const signed = await signAccessToken(
        {
          issuer,
          subject: p.user_id,
          audience: INTROSPECT_AUDIENCE,
          clientId: p.client_id,
          scopes: ['orders:read'],
          lifetimeSeconds: 3600,
          authTime: new Date(p.auth_time),
          acr: 'basic',
          amr: ['pwd'],
          sessionId: p.session_id,
        },
        signer,
        now,
      );
      tokens.push(signed.token);
    }
    return tokens;
  } finally {
    await db.close();
  }
}
