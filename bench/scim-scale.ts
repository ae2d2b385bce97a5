// An outside SCIM client provisions N users and 20 groups into one organization through that
// organization's connector, then deprovisions them (docs/scim.md, "Scale"): POST /Users per user
// as Entra ID sends it, group members added 50 to a PATCH operation, a count through the list
// endpoint, then DELETE of every user and group. The client keeps 4 requests in flight and honours
// the connector's budget of 1,200 requests a minute (429 with Retry-After), as a directory must.
// Reports the wall time of each phase, the statements the service sent per request and the CPU of
// the PostgreSQL backends per user.
//
// usage: BENCH_IMPORT_PG=postgres://postgres@127.0.0.1:5432/postgres \
//          node --import tsx bench/scim-scale.ts [users=10000]
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { SYSTEM_ACTOR } from '../src/kernel/call.ts';
import { createConnector } from '../src/scim/scim-connectors.service.ts';
import { startHarness } from '../test/harness/harness.ts';
import { seedOrganization } from '../test/harness/org-kit.ts';
import { counted, openDatabase, type Stats } from './import-db.ts';

const USERS = Number(process.argv[2] ?? 10_000);
const GROUPS = 20;
const IN_FLIGHT = 4;
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';

const hooks: (() => unknown)[] = [];
const t = { after: (fn: () => unknown) => hooks.push(fn) } as unknown as TestContext;
const bench = await openDatabase('pa_bench_scim');
const stats: Stats = { statements: 0, ms: 0 };
let requests = 0;
let limited = 0;

try {
  const h = await startHarness(t, { db: counted(bench.db, stats) });
  const realm = await h.createRealm('scim-scale');
  const orgId = await seedOrganization(h, realm, { slug: 'acme' });
  const { token } = await createConnector(
    h.ctx.db,
    { realmId: realm.id, actor: SYSTEM_ACTOR, correlationId: null, now: new Date() },
    'Acme Entra ID',
    orgId,
  );
  const base = `${h.publicUrl}/api/v1/realms/${realm.name}/scim/v2`;

  const scim = async (method: string, path: string, body?: unknown): Promise<Record<string, unknown>> => {
    for (;;) {
      requests++;
      const res = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/scim+json',
          ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const text = await res.text();
      if (res.status === 429) {
        limited++;
        await sleep(Number(res.headers.get('retry-after') ?? '1') * 1000);
        continue;
      }
      assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${text}`);
      return text ? (JSON.parse(text) as Record<string, unknown>) : {};
    }
  };
  /** Runs `fn` for 0..n-1 with IN_FLIGHT at a time. */
  const each = async (n: number, fn: (i: number) => Promise<unknown>) => {
    let next = 0;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (next < n) await fn(next++);
      }),
    );
  };
  const phases: Record<string, number> = {};
  const timed = async (name: string, fn: () => Promise<unknown>) => {
    const t0 = performance.now();
    await fn();
    phases[name] = Number(((performance.now() - t0) / 1000).toFixed(1));
    process.stderr.write(`${name}: ${phases[name]} s, ${requests} requests so far\n`);
  };

  stats.statements = 0;
  stats.ms = 0;
  await bench.resetServerCpu();
  const ids: string[] = new Array(USERS);
  const groupIds: string[] = [];
  await timed('create users', () =>
    each(USERS, async (i) => {
      const u = await scim('POST', '/Users', {
        schemas: [USER],
        externalId: `ext-${i}`,
        userName: `user${i}@acme.example`,
        active: true,
        displayName: `User ${i}`,
        emails: [{ primary: true, type: 'work', value: `user${i}@acme.example` }],
        name: { givenName: 'User', familyName: String(i) },
      });
      ids[i] = u.id as string;
    }),
  );
  await timed('create groups and members', async () => {
    for (let g = 0; g < GROUPS; g++)
      groupIds.push(
        (await scim('POST', '/Groups', { schemas: [GROUP], displayName: `Team ${g}` })).id as string,
      );
    const perGroup = Math.ceil(USERS / GROUPS);
    const patches: { group: string; members: string[] }[] = [];
    for (let g = 0; g < GROUPS; g++)
      for (let i = g * perGroup; i < Math.min(USERS, (g + 1) * perGroup); i += 50)
        patches.push({
          group: groupIds[g] as string,
          members: ids.slice(i, Math.min(i + 50, (g + 1) * perGroup)),
        });
    await each(patches.length, (k) => {
      const p = patches[k] as { group: string; members: string[] };
      return scim('PATCH', `/Groups/${p.group}`, {
        schemas: [PATCH_OP],
        Operations: [{ op: 'Add', path: 'members', value: p.members.map((value) => ({ value })) }],
      });
    });
  });
  const listed = await scim('GET', '/Users?count=1');
  assert.equal(listed.totalResults, USERS);
  const members = await h.ctx.db.query<{ n: number }>(
    `select count(*)::int as n from memberships where realm_id = $1 and organization_id = $2 and state = 'active'`,
    [realm.id, orgId],
  );
  assert.equal(members.rows[0]?.n, USERS);
  await timed('delete users', () => each(USERS, (i) => scim('DELETE', `/Users/${ids[i]}`)));
  await timed('delete groups', () => each(GROUPS, (g) => scim('DELETE', `/Groups/${groupIds[g]}`)));
  const left = await h.ctx.db.query<{ n: number }>(
    `select count(*)::int as n from users where realm_id = $1 and state <> 'deleted'`,
    [realm.id],
  );
  assert.equal(left.rows[0]?.n, 0);
  const cpu = await bench.serverCpuSeconds();
  process.stdout.write(
    `${JSON.stringify(
      {
        database: bench.label,
        users: USERS,
        groups: GROUPS,
        phases_seconds: phases,
        requests,
        rate_limited_answers: limited,
        statements_per_request: Number((stats.statements / requests).toFixed(2)),
        statements_per_user: Number((stats.statements / USERS).toFixed(2)),
        postgres_cpu_ms_per_user: cpu === null ? null : Number(((cpu * 1000) / USERS).toFixed(3)),
      },
      null,
      2,
    )}\n`,
  );
} finally {
  for (const fn of hooks.reverse()) await fn();
  await bench.drop();
}
