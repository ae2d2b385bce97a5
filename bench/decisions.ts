// The decision scenarios' model and inputs (bench/README.md: decision check and check-batch). On top of
// the seeded realm `bench` (10,000 users, ~2 custom role assignments each): 1,000 organizations
// with one active membership per user, a two-level composite role chain (doc-admin -> doc-writer
// -> doc-reader) that the seeded team roles expand into, an organization-scope doc-admin for one
// user in ten, and a relationship model (folder, document) with 100,000 tuples. Then a caller (a
// user holding resource-server, MFA session, admin-audience token) and the check bodies: RBAC
// checks of the introspection scenario's live user tokens, about half allowed, and relationship
// checks (view on a document: direct tuples, folder parents, organization members).

import { signAccessToken } from '../src/access/access-token.ts';
import { CLI_CLIENT_ID } from '../src/clients/builtin-clients.ts';
import { adminAudience, issuerOf } from '../src/kernel/audiences.ts';
import { createContext } from '../src/main/context.ts';
import { openPostgres } from '../src/platform/db/pg.ts';
import { newId } from '../src/platform/ids.ts';
import { createLogger } from '../src/platform/log.ts';
import { upsertGrant } from '../src/sessions/grants.repo.ts';
import { benchConfig, REALM } from './common.ts';

export const ORGANIZATIONS = 1_000;
export const TUPLES = 100_000;
export const BATCH_SIZE = 100;

export interface DecisionInputs {
  /** Authorization header of the resource-server caller. */
  auth: string;
  single: string[];
  batch: string[];
  /** Single relationship checks: view on documents, through folders and organization membership. */
  rebac: string[];
  tuples: number;
  organizations: number;
}

/** Actions the checks ask; the seeded roles give about half of them to a user. */
const ACTIONS = ['documents.read', 'documents.write', 'documents.delete', 'reports.export'];

export async function seedDecisions(o: {
  databaseUrl: string;
  rootKeyFile: string;
  port: number;
  subjectTokens: string[];
}): Promise<DecisionInputs> {
  const config = benchConfig({ databaseUrl: o.databaseUrl, rootKeyFile: o.rootKeyFile, port: o.port });
  const db = openPostgres({
    url: o.databaseUrl,
    maxConns: 2,
    statementTimeoutMs: 600_000,
    applicationName: 'bench-decisions',
  });
  try {
    const ctx = await createContext(config, { db, env: {}, log: createLogger('silent') });
    const realm = (await db.query<{ id: string }>('select id from realms where name = $1', [REALM])).rows[0];
    if (!realm) throw new Error('no bench realm');
    const rid = realm.id;
    const now = new Date();
    const users = (
      await db.query<{ id: string }>('select id from users where realm_id = $1 order by id', [rid])
    ).rows.map((r) => r.id);

    const orgIds = Array.from({ length: ORGANIZATIONS }, () => newId('org'));
    await db.query(
      `insert into organizations (realm_id, id, slug, display_name, state, created_at, updated_at)
       select $1, o.id, 'org-' || o.n, 'Org ' || o.n, 'active', $2, $2 from unnest($3::text[], $4::int[]) as o(id, n)`,
      [rid, now, orgIds, orgIds.map((_, i) => i)],
    );
    const orgOf = (u: number) => orgIds[u % ORGANIZATIONS] as string;
    await db.query(
      `insert into memberships (realm_id, id, organization_id, user_id, state, source, joined_at, created_at, updated_at)
       select $1, m.id, m.org, m.uid, 'active', 'admin', $2, $2, $2 from unnest($3::text[], $4::text[], $5::text[]) as m(id, org, uid)`,
      [rid, now, users.map(() => newId('mem')), users.map((_, i) => orgOf(i)), users],
    );

    // reader <- writer <- admin (two levels of expansion), team roles expand into them.
    const [reader, writer, admin] = [newId('rol'), newId('rol'), newId('rol')];
    await db.query(
      `insert into roles (realm_id, id, name, description, builtin, scope, permissions, composite_role_ids, created_at, updated_at)
       values ($1, $2, 'doc-reader', '', false, 'realm', '{documents.read}', '{}', $5, $5),
              ($1, $3, 'doc-writer', '', false, 'realm', '{documents.write}', array[$2], $5, $5),
              ($1, $4, 'doc-admin', '', false, 'organization', '{documents.delete}', array[$3], $5, $5)`,
      [rid, reader, writer, admin, now],
    );
    await db.query(
      `update roles set composite_role_ids = case when (substring(name from 6)::int % 4) = 0 then array[$2]
                                                 else array[$3] end
        where realm_id = $1 and name like 'team-%'`,
      [rid, writer, reader],
    );
    const orgAdmins = users.filter((_, i) => i % 10 === 0);
    await db.query(
      `insert into role_assignments (realm_id, id, role_id, subject_type, subject_id, scope_type, scope_id, source, created_at)
       select $1, x.id, $2, 'user', x.uid, 'organization', x.org, 'admin', $3 from unnest($4::text[], $5::text[], $6::text[]) as x(id, uid, org)`,
      [rid, admin, now, orgAdmins.map(() => newId('ras')), orgAdmins, orgAdmins.map((_, k) => orgOf(k * 10))],
    );

    // Relationship model: 10,000 folders (viewer: the organization's members), 22,500 documents.
    await db.query(
      `insert into authz_types (realm_id, name, relations, permissions, created_at, updated_at) values
         ($1, 'folder', '{"parent":["folder"],"viewer":["user","organization#member"]}', '{"view":"viewer + parent->view"}', $2, $2),
         ($1, 'document', '{"parent":["folder"],"viewer":["user","organization#member"],"editor":["user"]}',
          '{"edit":"editor","view":"viewer + edit + parent->view"}', $2, $2)`,
      [rid, now],
    );
    const t = {
      ot: [] as string[],
      oid: [] as string[],
      rel: [] as string[],
      st: [] as string[],
      sid: [] as string[],
      sr: [] as string[],
    };
    const add = (ot: string, oid: string, rel: string, st: string, sid: string, sr = '') => {
      t.ot.push(ot);
      t.oid.push(oid);
      t.rel.push(rel);
      t.st.push(st);
      t.sid.push(sid);
      t.sr.push(sr);
    };
    for (let f = 0; f < 10_000; f++)
      add('folder', `f${f}`, 'viewer', 'organization', orgIds[f % ORGANIZATIONS] as string, 'member');
    for (let d = 0; t.ot.length < TUPLES; d++) {
      const doc = `d${d}`;
      add('document', doc, 'parent', 'folder', `f${d % 10_000}`);
      add('document', doc, 'viewer', 'user', users[(d * 7) % users.length] as string);
      if (t.ot.length < TUPLES)
        add('document', doc, 'editor', 'user', users[(d * 13) % users.length] as string);
      if (t.ot.length < TUPLES)
        add('document', doc, 'viewer', 'user', users[(d * 31 + 1) % users.length] as string);
    }
    for (let from = 0; from < t.ot.length; from += 10_000) {
      const s = (a: string[]) => a.slice(from, from + 10_000);
      await db.query(
        `insert into authz_tuples (realm_id, object_type, object_id, relation, subject_type, subject_id, subject_relation, created_at)
         select $1, x.*, $2 from unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[]) as x`,
        [rid, now, s(t.ot), s(t.oid), s(t.rel), s(t.st), s(t.sid), s(t.sr)],
      );
    }
    await db.query('analyze');

    // The caller: a resource server's user with resource-server, an MFA session and a grant.
    const callerId = users[users.length - 1] as string;
    const rs = (
      await db.query<{ id: string }>(
        `select id from roles where realm_id = $1 and name = 'resource-server'`,
        [rid],
      )
    ).rows[0];
    if (!rs) throw new Error('no resource-server role');
    const sessionId = newId('ses');
    await db.tx(async (tx) => {
      await tx.query(
        `insert into role_assignments (realm_id, id, role_id, subject_type, subject_id, scope_type, scope_id, source, created_at)
         values ($1, $2, $3, 'user', $4, 'realm', '', 'admin', $5) on conflict do nothing`,
        [rid, newId('ras'), rs.id, callerId, now],
      );
      await upsertGrant(
        tx,
        { realmId: rid, userId: callerId, clientId: CLI_CLIENT_ID, scopes: [], resources: [] },
        now,
      );
      await tx.query(
        `insert into sessions (realm_id, id, user_id, auth_time, amr, acr, mfa, created_at, last_seen_at, idle_seconds, idle_expires_at, absolute_expires_at)
         values ($1, $2, $3, $4, '{pwd,otp}', 'mfa', true, $4, $4, 43200, $4::timestamptz + interval '12 hours', $4::timestamptz + interval '12 hours')`,
        [rid, sessionId, callerId, now],
      );
    });
    const signer = await ctx.keyStore.activeSigner(rid);
    if (!signer) throw new Error('no signing key');
    const origin = config.server.publicOrigin;
    const caller = await signAccessToken(
      {
        issuer: issuerOf(origin, REALM),
        subject: callerId,
        audience: adminAudience(origin, REALM),
        clientId: CLI_CLIENT_ID,
        scopes: [],
        lifetimeSeconds: 3600,
        authTime: now,
        acr: 'mfa',
        amr: ['pwd', 'otp'],
        sessionId,
      },
      signer,
      now,
    );

    // Checks: RBAC, realm scope or inside one organization (the user's or, for 1 in 8, another's).
    const orgByUser = new Map(users.map((u, i) => [u, orgOf(i)]));
    const subOf = (token: string): string =>
      (JSON.parse(Buffer.from(token.split('.')[1] as string, 'base64url').toString()) as { sub: string }).sub;
    const check = (token: string, i: number) => {
      const own = orgByUser.get(subOf(token)) ?? (orgIds[0] as string);
      const org = i % 3 === 0 ? null : i % 8 === 1 ? (orgIds[(i * 17) % ORGANIZATIONS] as string) : own;
      return {
        subject_token: token,
        action: ACTIONS[i % ACTIONS.length] as string,
        resource: { type: 'report', id: `r${i}`, ...(org ? { org_id: org } : {}) },
        context: {},
      };
    };
    const single = o.subjectTokens.map((tok, i) => JSON.stringify(check(tok, i)));
    const batch = o.subjectTokens.slice(0, 500).map((tok, i) =>
      JSON.stringify({
        checks: Array.from({ length: BATCH_SIZE }, (_, k) => check(tok, i * BATCH_SIZE + k)),
      }),
    );
    // Relationship checks: a document of a folder the user's organization views (allowed), or of
    // one of the next organization (denied unless a direct viewer or editor tuple names the user).
    const indexOf = new Map(users.map((u, i) => [u, i]));
    const rebac = o.subjectTokens.map((tok, i) => {
      const u = indexOf.get(subOf(tok)) ?? 0;
      const doc = ((i % 2 === 0 ? u : u + 1) % ORGANIZATIONS) + ORGANIZATIONS * (i % 22);
      return JSON.stringify({
        subject_token: tok,
        action: 'view',
        resource: { type: 'document', id: `d${doc}` },
        context: {},
      });
    });
    return {
      auth: `Bearer ${caller.token}`,
      single,
      batch,
      rebac,
      tuples: t.ot.length,
      organizations: ORGANIZATIONS,
    };
  } finally {
    await db.close();
  }
}
