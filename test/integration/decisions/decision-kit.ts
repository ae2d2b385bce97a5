// Decision API tests: a realm with a resource server caller (role resource-server), a registered
// resource, and subject tokens signed as the token endpoint would sign them, with the session and
// grant their live checks need.
import type { TestContext } from 'node:test';
import { issueOpaqueAccessToken, signAccessToken } from '../../../src/access/access-token.ts';
import { CLI_CLIENT_ID } from '../../../src/clients/builtin-clients.ts';
import { issuerOf } from '../../../src/kernel/audiences.ts';
import { newId } from '../../../src/platform/ids.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import type { ResourceScope } from '../../../src/resources/resource.ts';
import { findRoleByName } from '../../../src/roles/builtin-roles.repo.ts';
import { type ApiCallerKit, apiCaller, seedCliSession } from '../../harness/api-kit.ts';
import { type Harness, type HarnessOptions, startHarness } from '../../harness/harness.ts';
import { seedResource, seedServiceClient } from '../../harness/token-kit.ts';

export const AUDIENCE = 'https://api.example.test';

export interface DecisionKit {
  h: Harness;
  realm: RealmRow;
  caller: ApiCallerKit;
  resourceId: string;
  check(body: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
  /** A user (new unless given) and an access token of theirs for the kit's resource. */
  subject(opts?: SubjectOptions): Promise<{ userId: string; token: string; sessionId: string }>;
  /** A service principal (its own service client) and a client-credentials token of it. */
  principal(opts?: { allowedOrgIds?: string[] | null }): Promise<{ principalId: string; token: string }>;
  /** Creates an application role with these permissions; returns its id. */
  role(name: string, permissions: string[], composites?: string[]): Promise<string>;
  /** Assigns a role at realm (default), organization or project scope. */
  assign(
    roleId: string,
    subject: { type: 'user' | 'service_principal' | 'group'; id: string },
    scope?: { type: 'organization' | 'project'; id: string },
    conditions?: Record<string, unknown>,
  ): Promise<void>;
}

export interface SubjectOptions {
  userId?: string;
  orgId?: string;
  scopes?: string[];
  mfa?: boolean;
  acr?: string;
  authAgeSeconds?: number;
  lifetimeSeconds?: number;
  opaque?: boolean;
}

export async function decisionKit(
  t: TestContext,
  opts: HarnessOptions & {
    scopes?: ResourceScope[];
    callerRoles?: string[];
    callerLifetimeSeconds?: number;
  } = {},
): Promise<DecisionKit> {
  const h = await startHarness(t, opts);
  const realm = await h.createRealm();
  const caller = await apiCaller(h, realm, {
    roles: opts.callerRoles ?? ['resource-server'],
    lifetimeSeconds: opts.callerLifetimeSeconds ?? 300,
  });
  const resourceId = await seedResource(h, realm, { audience: AUDIENCE });
  if (opts.scopes) {
    await h.ctx.db.query('update resources set scopes = $3 where realm_id = $1 and id = $2', [
      realm.id,
      resourceId,
      JSON.stringify(opts.scopes),
    ]);
  }
  const post = async (path: string, body: unknown) => {
    const res = await caller.call('POST', path, body);
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  };
  const db = h.ctx.db;

  return {
    h,
    realm,
    caller,
    resourceId,
    post,
    check: (body) => post('/authorization/check', body),
    async subject(o = {}) {
      const now = h.ctx.clock.now();
      const userId =
        o.userId ?? (await h.createUser(realm, { email: `u-${newId('usr').slice(-10)}@example.com` })).id;
      const mfa = o.mfa ?? false;
      const authTime = new Date(now.getTime() - (o.authAgeSeconds ?? 0) * 1000);
      const session = await db.tx(async (tx) => {
        const { grant, session: s } = await seedCliSession(
          tx,
          realm.id,
          userId,
          { mfa, acr: o.acr, authTime },
          now,
        );
        if (o.orgId) {
          await tx.query('update oauth_grants set org_id = $3 where realm_id = $1 and id = $2', [
            realm.id,
            grant.id,
            o.orgId,
          ]);
        }
        return s;
      });
      const input = {
        issuer: issuerOf(h.ctx.config.server.publicOrigin, realm.name),
        subject: userId,
        audience: AUDIENCE,
        clientId: CLI_CLIENT_ID,
        scopes: o.scopes ?? [],
        lifetimeSeconds: o.lifetimeSeconds ?? 300,
        authTime,
        acr: session.acr,
        amr: session.amr,
        sessionId: session.id,
        orgId: o.orgId ?? null,
      };
      if (o.opaque) {
        const issued = issueOpaqueAccessToken(input, now);
        await db.query(
          `insert into opaque_access_tokens (realm_id, token_digest, jti, resource_id, client_id, user_id, session_id,
             claims, expires_at, created_at) values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [
            realm.id,
            issued.digest,
            issued.claims.jti,
            resourceId,
            CLI_CLIENT_ID,
            userId,
            session.id,
            JSON.stringify(issued.claims),
            new Date(issued.claims.exp * 1000),
            now,
          ],
        );
        return { userId, token: issued.token, sessionId: session.id };
      }
      const signer = await h.ctx.keyStore.activeSigner(realm.id);
      if (!signer) throw new Error('no signer');
      const { token } = await signAccessToken(input, signer, now);
      return { userId, token, sessionId: session.id };
    },
    async principal(o = {}) {
      const now = h.ctx.clock.now();
      const { client, principalId } = await seedServiceClient(h, realm, `svc-${newId('cli').slice(-10)}`);
      await db.query(
        'update service_principals set allowed_organization_ids = $3 where realm_id = $1 and id = $2',
        [realm.id, principalId, o.allowedOrgIds ?? null],
      );
      const signer = await h.ctx.keyStore.activeSigner(realm.id);
      if (!signer) throw new Error('no signer');
      const { token } = await signAccessToken(
        {
          issuer: issuerOf(h.ctx.config.server.publicOrigin, realm.name),
          subject: principalId,
          audience: AUDIENCE,
          clientId: client.client_id,
          scopes: [],
          lifetimeSeconds: 300,
        },
        signer,
        now,
      );
      return { principalId, token };
    },
    async role(name, permissions, composites = []) {
      const id = newId('rol');
      const compositeIds: string[] = [];
      for (const c of composites) {
        const r = await findRoleByName(db, realm.id, c);
        if (!r) throw new Error(`no role ${c}`);
        compositeIds.push(r.id);
      }
      await db.query(
        `insert into roles (realm_id, id, name, description, builtin, scope, permissions, composite_role_ids, created_at, updated_at)
         values ($1, $2, $3, '', false, 'realm', $4, $5, now(), now())`,
        [realm.id, id, name, permissions, compositeIds],
      );
      return id;
    },
    async assign(roleId, subject, scope, conditions) {
      await db.query(
        `insert into role_assignments (realm_id, id, role_id, subject_type, subject_id, scope_type, scope_id, source,
           conditions, created_at) values ($1, $2, $3, $4, $5, $6, $7, 'test', $8, now())`,
        [
          realm.id,
          newId('ras'),
          roleId,
          subject.type,
          subject.id,
          scope?.type ?? 'realm',
          scope?.id ?? '',
          conditions ? JSON.stringify(conditions) : null,
        ],
      );
    },
  };
}

/** A decision request body for the kit's resource server. */
export const checkBody = (
  token: string,
  action: string,
  resource: Record<string, unknown> = { type: 'document', id: 'doc-1' },
  context: Record<string, unknown> = {},
) => ({ subject_token: token, action, resource, context });

export type Tuple = Record<string, string>;

/** A relationship tuple from `type:id`, the relation, and `type:id` or `type:id#relation`. */
export const tuple = (object: string, relation: string, subject: string, extra: Tuple = {}): Tuple => {
  const [objectType = '', objectId = ''] = object.split(':');
  const [subjectPart = '', subjectRelation] = subject.split('#');
  const [subjectType = '', subjectId = ''] = subjectPart.split(':');
  return {
    object_type: objectType,
    object_id: objectId,
    relation,
    subject_type: subjectType,
    subject_id: subjectId,
    ...(subjectRelation ? { subject_relation: subjectRelation } : {}),
    ...extra,
  };
};
