// Support access tests: a realm with a support tool (confidential client with token exchange), a
// resource that accepts support access, its introspector, a resource server that asks for
// decisions, an administrator with support.impersonate and a customer holding application roles.
import type { TestContext } from 'node:test';
import { TOKEN_EXCHANGE } from '../../../src/oauth/grants/token-exchange.grant.ts';
import { newId } from '../../../src/platform/ids.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { SUPPORT_HANDOFF_TOKEN_TYPE } from '../../../src/support-grants/support-grant.ts';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { seedMembership, seedOrganization } from '../../harness/org-kit.ts';
import { type JsonResponse, json } from '../../harness/signin-driver.ts';
import { type MovableClock, movableClock, PASSWORD } from '../../harness/signin-kit.ts';
import { oauthPost, seedServiceClient } from '../../harness/token-kit.ts';

export const TICKETS = 'https://tickets.example.test';
export const TOOL = 'support-tool';

export const SCOPES = [
  { name: 'tickets:read', requiredPermissions: ['tickets.read'], sensitivity: 'normal' },
  { name: 'tickets:write', requiredPermissions: ['tickets.update', 'tickets.close'], sensitivity: 'normal' },
  { name: 'billing:read', requiredPermissions: ['billing.read'], sensitivity: 'normal' },
];
export const POLICY = {
  allowedScopes: ['tickets:read', 'billing:read'],
  writeScopes: ['tickets:write'],
  writeActions: ['tickets.update'],
  supportClientIds: [TOOL],
  contractVersion: '1',
};
/** Everything the customer may do as themselves. */
export const CUSTOMER_PERMISSIONS = [
  'tickets.read',
  'tickets.update',
  'tickets.close',
  'billing.read',
  'billing.refund',
];

type Creds = { clientId: string; secret: string };

export interface SupportKit {
  h: Harness;
  clock: MovableClock;
  realm: RealmRow;
  resourceId: string;
  admin: ApiCallerKit;
  tool: Creds;
  introspector: Creds;
  /**
   * A new active customer holding CUSTOMER_PERMISSIONS, an active member of an organization of
   * their own, which grantBody names.
   */
  customer(): Promise<string>;
  /** The customer's own account API caller. */
  accountOf(userId: string): Promise<ApiCallerKit>;
  organizationFor(userId: string): Promise<string>;
  grant(body: Record<string, unknown>, as?: ApiCallerKit): Promise<JsonResponse>;
  handoff(code: string, extra?: Record<string, string>, as?: Creds): Promise<JsonResponse>;
  introspect(token: string): Promise<JsonResponse>;
  check(token: string, action: string, resource?: Record<string, unknown>): Promise<JsonResponse>;
  events(type: string): Promise<{ org_id: string | null; data: Record<string, unknown> }[]>;
  /** The events with their correlation ids. */
  eventRows(
    type: string,
  ): Promise<{ org_id: string | null; correlation_id: string | null; data: Record<string, unknown> }[]>;
  audits(
    type: string,
  ): Promise<{ signal: string | null; reason: string | null; outcome: string; subject_id: string | null }[]>;
}

export async function supportKit(t: TestContext): Promise<SupportKit> {
  const clock = movableClock();
  const h = await startHarness(t, { clock });
  const realm = await h.createRealm();
  const db = h.ctx.db;
  const resourceId = `res_${Math.random().toString(36).slice(2, 12)}`;
  await db.query(
    `insert into resources (realm_id, id, name, audience, verification_mode, token_format, access_token_ttl_seconds,
       scopes, requires_organization, impersonation_enabled, impersonation_policy, created_at, updated_at)
     values ($1, $2, 'tickets', $3, 'strict_online', 'jwt', 600, $4, false, true, $5, now(), now())`,
    [realm.id, resourceId, TICKETS, JSON.stringify(SCOPES), JSON.stringify(POLICY)],
  );
  const admin = await apiCaller(h, realm);
  const tool = (await seedServiceClient(h, realm, TOOL, [TOKEN_EXCHANGE])).creds;
  const api = await seedServiceClient(h, realm, 'tickets-api');
  await db.query(
    'insert into resource_introspectors (realm_id, resource_id, client_row_id, created_at) values ($1, $2, $3, now())',
    [realm.id, resourceId, api.client.id],
  );
  const resourceServer = await apiCaller(h, realm, { roles: ['resource-server'] });
  const roleId = newId('rol');
  await db.query(
    `insert into roles (realm_id, id, name, description, builtin, scope, permissions, composite_role_ids, created_at, updated_at)
     values ($1, $2, 'ticket-user', '', false, 'realm', $3, '{}', now(), now())`,
    [realm.id, roleId, CUSTOMER_PERMISSIONS],
  );
  for (const p of CUSTOMER_PERMISSIONS) {
    await db.query(
      `insert into permissions (realm_id, name, description, sensitivity, created_at) values ($1, $2, '', $3, now())`,
      [realm.id, p, p === 'billing.refund' ? 'privileged' : 'normal'],
    );
  }

  async function eventRows(type: string) {
    const r = await db.query<{
      org_id: string | null;
      correlation_id: string | null;
      data: Record<string, unknown> | string;
    }>(
      'select org_id, correlation_id, data from outbox where realm_id = $1 and event_type = $2 order by id',
      [realm.id, type],
    );
    return r.rows.map((row) => ({
      org_id: row.org_id,
      correlation_id: row.correlation_id,
      data: typeof row.data === 'string' ? (JSON.parse(row.data) as Record<string, unknown>) : row.data,
    }));
  }

  return {
    h,
    clock,
    realm,
    resourceId,
    admin,
    tool,
    introspector: api.creds,
    async customer() {
      const user = await h.createUser(realm, {
        email: `c-${newId('usr').slice(-10)}@example.com`,
        password: PASSWORD,
      });
      await db.query(
        `insert into role_assignments (realm_id, id, role_id, subject_type, subject_id, scope_type, scope_id, source, created_at)
         values ($1, $2, $3, 'user', $4, 'realm', '', 'test', now())`,
        [realm.id, newId('ras'), roleId, user.id],
      );
      const orgId = await seedOrganization(h, realm);
      await seedMembership(h, realm, orgId, user.id);
      homeOrgs.set(user.id, orgId);
      return user.id;
    },
    accountOf: (userId) => apiCaller(h, realm, { audience: 'account', userId }),
    async organizationFor(userId) {
      const orgId = await seedOrganization(h, realm);
      await seedMembership(h, realm, orgId, userId);
      return orgId;
    },
    grant: async (body, as = admin) => json(await as.call('POST', '/support-grants', body)),
    handoff: (code, extra = {}, as = tool) =>
      oauthPost(
        h,
        realm,
        'token',
        {
          grant_type: TOKEN_EXCHANGE,
          subject_token: code,
          subject_token_type: SUPPORT_HANDOFF_TOKEN_TYPE,
          resource: TICKETS,
          ...extra,
        },
        as,
      ),
    introspect: (token) => oauthPost(h, realm, 'introspect', { token }, api.creds),
    check: async (token, action, resource = { type: 'ticket', id: 't1' }) =>
      json(
        await resourceServer.call('POST', '/authorization/check', { subject_token: token, action, resource }),
      ),
    async events(type) {
      return (await eventRows(type)).map((e) => ({ org_id: e.org_id, data: e.data }));
    },
    eventRows,
    async audits(type) {
      const r = await db.query<{
        signal: string | null;
        reason: string | null;
        outcome: string;
        subject_id: string | null;
      }>(
        'select signal, reason, outcome, subject_id from audit_events where realm_id = $1 and type = $2 order by id',
        [realm.id, type],
      );
      return r.rows;
    },
  };
}

/** The organization each customer of supportKit belongs to (user ids are unique). */
const homeOrgs = new Map<string, string>();

/** The organization `customer()` made for this customer. */
export function homeOrgOf(userId: string): string {
  const orgId = homeOrgs.get(userId);
  if (orgId === undefined) throw new Error(`${userId} is no customer of the kit`);
  return orgId;
}

/**
 * A grant body for `userId` with the kit's tool and resource, in the customer's organization
 * (none for users who are not customers of the kit); members may be overridden.
 */
export const grantBody = (userId: string, over: Record<string, unknown> = {}) => ({
  user_id: userId,
  client_id: TOOL,
  resource: TICKETS,
  organization_id: homeOrgs.get(userId),
  scopes: ['tickets:read'],
  reason: 'ticket #4711: customer cannot see invoices',
  ...over,
});

/** Creates a grant and redeems its handoff code; returns the grant body and the access token. */
export async function supportToken(
  k: SupportKit,
  userId: string,
  over: Record<string, unknown> = {},
  as: ApiCallerKit = k.admin,
): Promise<{ grant: Record<string, unknown>; token: string }> {
  const g = await k.grant(grantBody(userId, over), as);
  if (g.status !== 201) throw new Error(`grant: ${g.status} ${JSON.stringify(g.body)}`);
  const r = await k.handoff(g.body.handoff_code);
  if (r.status !== 200) throw new Error(`handoff: ${r.status} ${JSON.stringify(r.body)}`);
  return { grant: g.body, token: r.body.access_token };
}
