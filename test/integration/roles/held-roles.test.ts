// The holdings the live checks expand in memory (held assignments read live, composites from the
// process's copy of the role definitions: src/roles/role-definitions.ts) are exactly those the
// SQL expansion (effectiveRolesSql, still used by job re-checks and support) gives, on random role
// graphs with cycles, dangling composites, groups, scopes, conditions and validity windows.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { newId } from '../../../src/platform/ids.ts';
import {
  type AssignmentScopes,
  effectiveRolesSql,
  heldAssignmentsSql,
  type RoleContextSql,
  type RoleHolding,
} from '../../../src/roles/effective-roles.ts';
import { type HeldRoles, heldRolesSql, holdingsOf } from '../../../src/roles/role-definitions.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';

// A small deterministic generator, so a failing graph can be run again.
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

const canonical = (hs: readonly RoleHolding[]): string[] =>
  hs
    .map((h) =>
      JSON.stringify([h.name, h.builtin, h.permissions, h.scope_type, h.scope_id, h.conditions ?? null]),
    )
    .sort();

const parsed = (v: unknown): unknown => (typeof v === 'string' ? JSON.parse(v) : v);

describe('roles › held assignments expanded in memory', () => {
  test('case=the same holdings as the SQL expansion, on random role graphs', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    const user = await h.createUser(realm, { email: 'held@example.com' });
    const db = h.ctx.db;
    const now = h.ctx.clock.now();
    const member = await seedOrganization(h, realm);
    await seedMembership(h, realm, member, user.id);
    const stranger = await seedOrganization(h, realm);
    const project = await seedProject(h, realm.id, 'active');
    const archived = await seedProject(h, realm.id, 'archived');
    const top = await seedGroup(h, realm.id, null, 1);
    const child = await seedGroup(h, realm.id, top, 2);
    const other = await seedGroup(h, realm.id, null, 1);
    await db.query(
      `insert into group_members (realm_id, group_id, subject_type, subject_id, created_at)
       values ($1, $2, 'user', $3, now())`,
      [realm.id, child, user.id],
    );

    const scopes = [
      ['realm', ''],
      ['organization', member],
      ['organization', stranger],
      ['project', project],
      ['project', archived],
    ] as const;
    const conditions = [null, { require_mfa: true }, { max_auth_age_seconds: 300 }];
    const subjects = [
      ['user', user.id],
      ['group', top],
      ['group', child],
      ['group', other],
    ] as const;
    const hour = 3600_000;
    const windows = [
      [null, null],
      [new Date(now.getTime() - hour), new Date(now.getTime() + hour)],
      [null, new Date(now.getTime() - hour)],
      [new Date(now.getTime() + hour), null],
    ] as const;

    let compared = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const next = random(seed);
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
      const ids = Array.from({ length: 12 }, () => newId('rol'));
      await db.query('delete from role_assignments where realm_id = $1 and source = $2', [
        realm.id,
        'held-test',
      ]);
      await db.query('delete from roles where realm_id = $1 and name like $2', [realm.id, 'held-%']);
      for (const [i, id] of ids.entries()) {
        const composites = ids.filter(() => next() < 0.2);
        if (next() < 0.2) composites.push(newId('rol')); // a composite the realm does not define
        await db.query(
          `insert into roles (realm_id, id, name, builtin, scope, permissions, composite_role_ids, created_at, updated_at)
           values ($1, $2, $3, false, 'realm', $4, $5, now(), now())`,
          [realm.id, id, `held-${seed}-${i}`, [`p${i}.read`, `p${(i + 1) % 5}.write`], composites],
        );
      }
      for (let n = 0; n < 14; n++) {
        const [scopeType, scopeId] = pick(scopes);
        const [subjectType, subjectId] = pick(subjects);
        const [validFrom, expiresAt] = pick(windows);
        const c = pick(conditions);
        await db.query(
          `insert into role_assignments (realm_id, id, role_id, subject_type, subject_id, scope_type, scope_id, source,
             conditions, valid_from, expires_at, created_at)
           values ($1, $2, $3, $4, $5, $6, $7, 'held-test', $8, $9, $10, now())
           on conflict do nothing`,
          [
            realm.id,
            newId('ras'),
            pick(ids),
            subjectType,
            subjectId,
            scopeType,
            scopeId,
            c === null ? null : JSON.stringify(c),
            validFrom,
            expiresAt,
          ],
        );
      }
      const contexts: [string[], string[]][] = [
        [[], []],
        [[member], []],
        [
          [member, stranger],
          [project, archived],
        ],
        [[], [project]],
      ];
      for (const [orgs, projects] of contexts) {
        const c: RoleContextSql = {
          realmId: '$1',
          subjectType: "'user'",
          subjectId: '$2',
          now: '$3',
          orgId: 'any ($4::text[])',
          projectId: 'any ($5::text[])',
        };
        const params = [realm.id, user.id, now, orgs, projects];
        const bySql = await db.query<{ roles: unknown }>(`select ${effectiveRolesSql(c)} as roles`, params);
        const want = (parsed(bySql.rows[0]?.roles) as RoleHolding[] | null) ?? [];
        const parts: AssignmentScopes = { organization: orgs.length > 0, project: projects.length > 0 };
        const read = await db.query<{ roles: unknown }>(
          // The context's arrays are named even where a scope is left out (every parameter is used).
          `select ${heldRolesSql('$1', heldAssignmentsSql(c, parts), 'null::bigint')} as roles,
             $4::text[] as orgs, $5::text[] as projects`,
          params,
        );
        const got = holdingsOf(realm.id, undefined, parsed(read.rows[0]?.roles) as HeldRoles) ?? [];
        assert.deepEqual(
          canonical(got),
          canonical(want),
          `seed ${seed}, orgs ${orgs.length}, projects ${projects.length}`,
        );
        compared += want.length;
      }
    }
    // The graphs held something to compare.
    assert.ok(compared > 50, `only ${compared} holdings compared`);
  });
});

async function seedProject(h: Harness, realmId: string, state: string): Promise<string> {
  const id = newId('prj');
  await h.ctx.db.query(
    `insert into projects (realm_id, id, name, environment, state, created_at, updated_at)
     values ($1, $2, $3, 'production', $4, now(), now())`,
    [realmId, id, id, state],
  );
  return id;
}

async function seedGroup(h: Harness, realmId: string, parent: string | null, depth: number): Promise<string> {
  const id = newId('grp');
  await h.ctx.db.query(
    `insert into groups (realm_id, id, parent_id, depth, name, created_at, updated_at)
     values ($1, $2, $3, $4, $5, now(), now())`,
    [realmId, id, parent, depth, id],
  );
  return id;
}
