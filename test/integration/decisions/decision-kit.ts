// Decision API tests: a realm with a resource server caller (role resource-server), a registered
// resource, and subject tokens from real sign-ins: identity-cli granted the resource, the code
// exchanged at the token endpoint, and client-credentials tokens for service principals.
import type { TestContext } from 'node:test';
import { CLI_CLIENT_ID } from '../../../src/clients/builtin-clients.ts';
import type { ClientRow } from '../../../src/clients/clients.repo.ts';
import { newId } from '../../../src/platform/ids.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import type { ResourceScope } from '../../../src/resources/resource.ts';
import { findRoleByName } from '../../../src/roles/builtin-roles.repo.ts';
import { type ApiCallerKit, apiCaller, cliSignIn, emailOf } from '../../harness/api-kit.ts';
import { type Harness, type HarnessOptions, startHarness } from '../../harness/harness.ts';
import { PASSWORD } from '../../harness/signin-kit.ts';
import { oauthPost, seedGrant, seedResource, seedServiceClient } from '../../harness/token-kit.ts';

export const AUDIENCE = 'https://api.example.test';
/** The same resource server's second audience, which takes opaque tokens. */
export const OPAQUE_AUDIENCE = 'https://opaque.api.example.test';

export interface DecisionKit {
  h: Harness;
  realm: RealmRow;
  caller: ApiCallerKit;
  resourceId: string;
  /**
   * Replaces the resource's scope definitions. Sign-in enforces a scope's step-up rules itself, so
   * a token that lacks the assurance a scope now demands is one issued before the rule was set.
   */
  setScopes(scopes: ResourceScope[]): Promise<void>;
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
  /** Signs in to this organization (the user must be a member). */
  orgId?: string;
  scopes?: string[];
  /** Asks for acr mfa at sign-in: TOTP enrollment the first time, the TOTP afterwards. */
  mfa?: boolean;
  /** Moves the harness clock this far after the sign-in and refreshes the token. */
  authAgeSeconds?: number;
  opaque?: boolean;
}

export async function decisionKit(
  t: TestContext,
  opts: HarnessOptions & {
    scopes?: ResourceScope[];
    callerRoles?: string[];
    /** The access token lifetime of the kit's resource (default 300 s). */
    tokenTtlSeconds?: number;
  } = {},
): Promise<DecisionKit> {
  const h = await startHarness(t, opts);
  const realm = await h.createRealm();
  const caller = await apiCaller(h, realm, { roles: opts.callerRoles ?? ['resource-server'] });
  // The resources and identity-cli's grants are rows written the way the resources API writes them
  // (a speed shortcut; test/integration/api/resources.test.ts covers that API).
  const resourceId = await seedResource(h, realm, { audience: AUDIENCE, ttl: opts.tokenTtlSeconds ?? 300 });
  const opaqueId = await seedResource(h, realm, { audience: OPAQUE_AUDIENCE, tokenFormat: 'opaque' });
  const setScopes = (scopes: ResourceScope[]) =>
    h.ctx.db.query('update resources set scopes = $3 where realm_id = $1 and id = $2', [
      realm.id,
      resourceId,
      JSON.stringify(scopes),
    ]);
  if (opts.scopes) await setScopes(opts.scopes);
  const cli = await cliClient(h, realm);
  const scopeNames = (opts.scopes ?? []).map((s) => s.name);
  await seedGrant(h, realm, cli, resourceId, { scopes: scopeNames });
  await seedGrant(h, realm, cli, opaqueId, { scopes: [] });
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
    async setScopes(scopes) {
      await setScopes(scopes);
    },
    post,
    check: (body) => post('/authorization/check', body),
    async subject(o = {}) {
      const user = o.userId
        ? { id: o.userId, email: await emailOf(h, realm, o.userId) }
        : await newSubjectUser(h, realm);
      const tokens = await cliSignIn(h, realm, user, {
        resources: [o.opaque ? OPAQUE_AUDIENCE : AUDIENCE],
        scopes: o.scopes ?? [],
        ...(o.orgId ? { organization: o.orgId } : {}),
        ...(o.mfa ? { acrValues: 'mfa' } : {}),
      });
      let token = tokens.accessToken;
      if (o.authAgeSeconds) {
        h.clock.advance(o.authAgeSeconds * 1000);
        token = await tokens.refresh();
      }
      return { userId: user.id, token, sessionId: tokens.sessionId };
    },
    async principal(o = {}) {
      const { client, principalId, creds } = await seedServiceClient(
        h,
        realm,
        `svc-${newId('cli').slice(-10)}`,
      );
      // Written as the service principals API writes it (a speed shortcut; roles suites test it).
      await db.query(
        'update service_principals set allowed_organization_ids = $3 where realm_id = $1 and id = $2',
        [realm.id, principalId, o.allowedOrgIds ?? null],
      );
      await seedGrant(h, realm, client, resourceId, { scopes: [], subjectTypes: ['service_principal'] });
      const r = await oauthPost(
        h,
        realm,
        'token',
        { grant_type: 'client_credentials', resource: AUDIENCE },
        creds,
      );
      if (r.status !== 200) throw new Error(`client credentials: ${JSON.stringify(r.body)}`);
      return { principalId, token: r.body.access_token as string };
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

async function cliClient(h: Harness, realm: RealmRow): Promise<ClientRow> {
  const r = await h.ctx.db.query<ClientRow>('select * from clients where realm_id = $1 and client_id = $2', [
    realm.id,
    CLI_CLIENT_ID,
  ]);
  const row = r.rows[0];
  if (!row) throw new Error('realm has no identity-cli client');
  return row;
}

async function newSubjectUser(h: Harness, realm: RealmRow) {
  const email = `u-${newId('usr').slice(-10)}@example.com`;
  const u = await h.createUser(realm, { email, password: PASSWORD });
  return { id: u.id, email };
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
