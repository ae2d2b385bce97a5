// Shared setup of the organizations API tests: a harness on a clock tests can move, a realm
// administrator, organization administrators and members, and org-bound grants seeded as rows.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { newId } from '../../../src/platform/ids.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { seedMembership, seedOrgRole } from '../../harness/org-kit.ts';
import { type MovableClock, movableClock, PASSWORD, rows } from '../../harness/signin-kit.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked member by member
export type Body = any;
export const body = async (res: Response): Promise<Body> => res.json();

export const HOUR = 3600_000;
export const DAY = 24 * HOUR;

export interface OrgSetup {
  h: Harness;
  realm: RealmRow;
  admin: ApiCallerKit;
  clock: MovableClock;
}

export async function setup(t: TestContext, overrides: Record<string, unknown> = {}): Promise<OrgSetup> {
  const clock = movableClock();
  const h = await startHarness(t, { clock, overrides });
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  return { h, realm, admin, clock };
}

/** Creates an organization through the API as the realm administrator (who becomes its owner). */
export async function createOrg(s: OrgSetup, input: Record<string, unknown> = {}): Promise<Body> {
  const slug = `org-${Math.random().toString(36).slice(2, 10)}`;
  const res = await s.admin.call('POST', '/organizations', { slug, display_name: slug, ...input });
  assert.equal(res.status, 201, await res.clone().text());
  return body(res);
}

/** A user holding no realm role, with an active membership and one organization role inside `orgId`. */
export async function orgCaller(s: OrgSetup, orgId: string, role: string): Promise<ApiCallerKit> {
  const caller = await apiCaller(s.h, s.realm, { roles: [] });
  await seedMembership(s.h, s.realm, orgId, caller.userId);
  await seedOrgRole(s.h, s.realm, orgId, { type: 'user', id: caller.userId }, role);
  return caller;
}

export const accountCaller = (s: OrgSetup, userId: string) =>
  apiCaller(s.h, s.realm, { audience: 'account', userId });

export const newUser = async (s: OrgSetup): Promise<string> =>
  (await s.h.createUser(s.realm, { email: `u-${newId('usr').slice(-10)}@example.com`, password: PASSWORD }))
    .id;

/**
 * An org-bound grant with a refresh family and an opaque access token, as sign-in would leave them:
 * a speed shortcut for rows the tests only watch being revoked (nobody presents these tokens).
 */
export async function seedOrgGrant(s: OrgSetup, userId: string, orgId: string) {
  const now = s.clock.now();
  const grantId = newId('grt', now.getTime());
  const familyId = newId('rtf', now.getTime());
  const digest = randomBytes(16).toString('hex');
  const later = new Date(now.getTime() + 24 * HOUR);
  const db = s.h.ctx.db;
  await db.query(
    `insert into oauth_grants (realm_id, id, user_id, client_id, scopes, resources, created_at, updated_at, org_id)
     values ($1, $2, $3, 'web-app', '{openid}', '{}', $4, $4, $5)`,
    [s.realm.id, grantId, userId, now, orgId],
  );
  await db.query(
    `insert into refresh_families (realm_id, id, grant_id, user_id, client_id, offline, scopes, resources, auth_time,
       amr, acr, created_at, idle_expires_at, absolute_expires_at, org_id, idle_seconds)
     values ($1, $2, $3, $4, 'web-app', false, '{openid}', '{}', $5, '{pwd}', 'basic', $5, $6, $6, $7, 86400)`,
    [s.realm.id, familyId, grantId, userId, now, later, orgId],
  );
  await db.query(
    `insert into opaque_access_tokens (realm_id, token_digest, jti, resource_id, client_id, user_id, claims,
       expires_at, created_at, org_id)
     values ($1, $2, $3, 'res_x', 'web-app', $4, '{}', $5, $6, $7)`,
    [s.realm.id, digest, `jti-${digest}`, userId, later, now, orgId],
  );
  return {
    /** Which of the three are still live. */
    live: async () => {
      const [g] = await rows(s.h, 'select revoked_at from oauth_grants where realm_id = $1 and id = $2', [
        s.realm.id,
        grantId,
      ]);
      const [f] = await rows(s.h, 'select revoked_at from refresh_families where realm_id = $1 and id = $2', [
        s.realm.id,
        familyId,
      ]);
      const [o] = await rows(
        s.h,
        'select revoked_at from opaque_access_tokens where realm_id = $1 and token_digest = $2',
        [s.realm.id, digest],
      );
      return {
        grant: g?.revoked_at === null,
        family: f?.revoked_at === null,
        opaque: o?.revoked_at === null,
      };
    },
  };
}

export const outbox = (s: OrgSetup, type: string) =>
  rows(s.h, 'select * from outbox where realm_id = $1 and event_type = $2 order by id', [s.realm.id, type]);

export const auditRows = (s: OrgSetup, type: string) =>
  rows(s.h, 'select * from audit_events where realm_id = $1 and type = $2 order by id', [s.realm.id, type]);

export async function membershipRow(s: OrgSetup, id: string) {
  const [m] = await rows(s.h, 'select * from memberships where realm_id = $1 and id = $2', [s.realm.id, id]);
  return m;
}
