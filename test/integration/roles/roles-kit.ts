// Shared setup of the roles, groups, projects and service-principal API tests.
import type { TestContext } from 'node:test';
import type { Clock } from '../../../src/platform/clock.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { seedMembership, seedOrgRole } from '../../harness/org-kit.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked member by member
export type Body = any;

export interface Reply {
  status: number;
  body: Body;
  headers: Headers;
}

export async function send(
  who: ApiCallerKit,
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
): Promise<Reply> {
  const res = await who.call(method, path, body, headers);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

export async function setup(t: TestContext, clock?: Clock) {
  const h = await startHarness(t, clock ? { clock } : {});
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  const as =
    (who: ApiCallerKit) => (method: string, path: string, body?: unknown, headers?: Record<string, string>) =>
      send(who, method, path, body, headers);
  return { h, realm, admin, api: as(admin), as };
}

/** Creates a realm role through the API and returns its id. */
export async function createRole(
  admin: ApiCallerKit,
  body: Record<string, unknown>,
  path = '/roles',
): Promise<string> {
  const r = await send(admin, 'POST', path, body);
  if (r.status !== 201) throw new Error(`role not created: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}

/** A caller without realm roles, holding only what the test assigns. */
export const bareCaller = (h: Harness, realm: RealmRow) => apiCaller(h, realm, { roles: [] });

/** A member of the organization holding its admin role and no realm roles, and a sender as them. */
export async function orgAdmin(h: Harness, realm: RealmRow, orgId: string) {
  const caller = await bareCaller(h, realm);
  await seedMembership(h, realm, orgId, caller.userId);
  await seedOrgRole(h, realm, orgId, { type: 'user', id: caller.userId }, 'admin');
  const as = (m: string, p: string, b?: unknown) => send(caller, m, p, b);
  return { caller, as };
}

/** Assigns a role at realm scope through the API. */
export async function assign(
  admin: ApiCallerKit,
  roleId: string,
  subject: { type: string; id: string },
  extra: Record<string, unknown> = {},
): Promise<Reply> {
  return send(admin, 'POST', '/role-assignments', {
    role_id: roleId,
    subject_type: subject.type,
    subject_id: subject.id,
    scope_type: 'realm',
    ...extra,
  });
}
