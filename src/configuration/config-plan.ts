// The plan of a configuration import (spec doc 1, Import semantics 1-7; docs/configuration-as-code.md,
// "The plan"): what each object of the document would do against the realm as it is (create,
// update, unchanged), the errors that stop the import, and the permissions the changes need.
import type { ClientRecord } from '../clients/index.ts';
import {
  listClientRecords,
  presentTlsClientAuth,
  TLS_SUBJECT_MEMBERS,
  tlsInputOf,
} from '../clients/index.ts';
import type { Queryable } from '../platform/db/db.ts';
import {
  currentPolicy,
  defaultRealmPolicy,
  jsonPointer,
  type PolicyRuleOptions,
  planPolicy,
  type RealmRow,
} from '../realms/index.ts';
import {
  builtinResources,
  type GrantRecord,
  grantProblems,
  grantUnchanged,
  listGrantsOfRealm,
  listResourceRows,
  type ResourceDefinition,
  type ResourceInput,
  resourceFromRow,
} from '../resources/index.ts';
import { isKnownBuiltinPermission, listPermissions, listRoles, type RoleRow } from '../roles/index.ts';
import type {
  ConfigDocument,
  DocClient,
  DocGrant,
  DocResource,
  DocRole,
  PlanError,
} from './config-document.ts';

export type ImportMode = 'create' | 'reconcile';

export interface KindPlan {
  create: string[];
  update: string[];
  /** Existing objects left as they are (Import semantics 1). */
  unchanged: string[];
  /** Existing objects that differ from the document but are not updated (create mode). */
  differs: string[];
}

export interface GrantRef {
  client_id: string;
  resource: string;
}

export interface PolicyPlanView {
  /** absent: the document gives no policy. */
  action: 'absent' | 'update' | 'unchanged';
  current_revision: number;
  sections: string[];
}

/** The plan as the API shows it. */
export interface PlanBody {
  format: string;
  mode: ImportMode;
  valid: boolean;
  policy: PolicyPlanView;
  resources: KindPlan;
  clients: KindPlan;
  permissions: KindPlan;
  roles: KindPlan;
  client_resource_grants: { create: GrantRef[]; update: GrantRef[]; unchanged: GrantRef[] };
  /** Permissions the caller lacks for the changes planned (a real import is refused with 403). */
  missing_permissions: string[];
  errors: PlanError[];
}

/** What applying needs beyond the body: the matched rows and the merged inputs. */
export interface Plan {
  body: PlanBody;
  doc: ConfigDocument;
  policyRevision: number;
  policyChanges: boolean;
  resourceUpdates: Map<string, { id: string; input: ResourceInput }>;
  clientUpdates: Map<string, DocClient>;
  roleUpdates: Map<string, { row: RoleRow; role: DocRole }>;
  /** Grants to create or replace, with the stored one whose omitted members are kept. */
  grantChanges: { grant: DocGrant; stored: GrantRecord | undefined }[];
  needed: Set<string>;
}

const kind = (): KindPlan => ({ create: [], update: [], unchanged: [], differs: [] });

const sameSet = (a: readonly string[], b: readonly string[]) => {
  const sa = new Set(a);
  const sb = new Set(b);
  return sa.size === sb.size && [...sa].every((x) => sb.has(x));
};
/** JSON with object members in sorted order: stored JSON (jsonb) does not keep member order. */
function canonical(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(canonical);
  if (typeof v !== 'object' || v === null) return v;
  const o = v as Record<string, unknown>;
  return Object.fromEntries(
    Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => [k, canonical(o[k])]),
  );
}
const same = (a: unknown, b: unknown) => JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));

/** A scope as the resource API stores it, whichever way it was written. */
const scopeForm = (s: ResourceDefinition['scopes'][number]) => ({
  ...s,
  requiredPermissions: s.requiredPermissions ?? [],
  sensitivity: s.sensitivity ?? 'normal',
});

/** A stored resource with the document's given members over it (Import semantics 2). */
export function mergedResource(current: ResourceDefinition, r: DocResource): ResourceInput {
  const g = (wire: string) => r.given.has(wire);
  const v = r.input;
  return {
    name: g('name') ? v.name : current.name,
    audience: current.audience,
    verificationMode: g('verification_mode') ? v.verificationMode : current.verificationMode,
    tokenFormat: g('token_format') ? v.tokenFormat : current.tokenFormat,
    accessTokenTtlSeconds: g('access_token_ttl_seconds')
      ? v.accessTokenTtlSeconds
      : current.accessTokenTtlSeconds,
    scopes: g('scopes') ? v.scopes : current.scopes,
    requiresOrganization: g('requires_organization') ? v.requiresOrganization : current.requiresOrganization,
    impersonationEnabled: g('impersonation_enabled') ? v.impersonationEnabled : current.impersonationEnabled,
    impersonationPolicy: g('impersonation_policy') ? v.impersonationPolicy : current.impersonationPolicy,
    signingAlgorithm: g('signing_algorithm') ? v.signingAlgorithm : current.signingAlgorithm,
  };
}

const resourceDiffers = (current: ResourceDefinition, next: ResourceInput) =>
  !same(
    { ...next, audience: current.audience, scopes: next.scopes.map(scopeForm) },
    {
      name: current.name,
      audience: current.audience,
      verificationMode: current.verificationMode,
      tokenFormat: current.tokenFormat,
      accessTokenTtlSeconds: current.accessTokenTtlSeconds,
      scopes: current.scopes.map(scopeForm),
      requiresOrganization: current.requiresOrganization,
      impersonationEnabled: current.impersonationEnabled,
      impersonationPolicy: current.impersonationPolicy,
      signingAlgorithm: current.signingAlgorithm,
    },
  );

/** Members of a client the document gave that differ from the stored client. */
export function clientDifferences(current: ClientRecord, c: DocClient): string[] {
  const v = c.input;
  const checks: [string, unknown, unknown, 'set' | 'value'][] = [
    ['name', v.name, current.name, 'value'],
    ['description', v.description ?? null, current.description, 'value'],
    ['redirect_uris', v.redirectUris, current.redirect_uris, 'set'],
    ['post_logout_redirect_uris', v.postLogoutRedirectUris, current.post_logout_redirect_uris, 'set'],
    ['allowed_origins', v.allowedOrigins, current.allowed_origins, 'set'],
    ['grant_types', v.grantTypes, current.grant_types, 'set'],
    ['consent_mode', v.consentMode, current.consent_mode, 'value'],
    ['token_policy', v.tokenPolicy?.requireMfa ?? false, current.require_mfa, 'value'],
    ['allow_remember_me', v.allowRememberMe, current.allow_remember_me, 'value'],
    ['id_token_claims', v.idTokenClaims, current.id_token_claims, 'value'],
    [
      'require_pushed_authorization_requests',
      v.requirePushedAuthorizationRequests ?? false,
      current.require_pushed_authorization_requests,
      'value',
    ],
    ['jwks', v.jwks ?? null, current.jwks, 'value'],
    ...tlsChecks(current, c),
    ['backchannel_logout_uri', v.backchannelLogoutUri ?? null, current.backchannel_logout_uri, 'value'],
    [
      'backchannel_logout_session_required',
      v.backchannelLogoutSessionRequired ?? false,
      current.backchannel_logout_session_required,
      'value',
    ],
    ['type', v.type, current.type, 'value'],
    ['token_endpoint_auth_method', v.tokenEndpointAuthMethod, current.token_endpoint_auth_method, 'value'],
  ];
  return checks
    .filter(([wire]) => c.given.has(wire))
    .filter(([, a, b, how]) =>
      how === 'set' ? !sameSet((a as string[]) ?? [], (b as string[]) ?? []) : !same(a, b),
    )
    .map(([wire]) => wire);
}

/** The tls_client_auth members (RFC 8705 section 2.1.2), each compared on its own. */
function tlsChecks(current: ClientRecord, c: DocClient): [string, unknown, unknown, 'value'][] {
  const given = tlsInputOf(c.input) ?? {};
  const stored = presentTlsClientAuth(current.tls_client_auth);
  return [...TLS_SUBJECT_MEMBERS, 'tls_client_auth_trust_anchors' as const].map((m) => [
    m,
    given[m] ?? null,
    stored[m] ?? null,
    'value',
  ]);
}

const IMMUTABLE_CLIENT = ['type', 'token_endpoint_auth_method'];

function roleDiffers(row: RoleRow, r: DocRole): boolean {
  const lower = (l: readonly string[]) => l.map((p) => p.toLowerCase());
  return (
    !sameSet(lower(row.permissions), lower(r.input.permissions)) ||
    (r.input.description !== undefined && r.input.description !== row.description)
  );
}

const ALL = { after: null, limit: 1_000_000 };

export interface PlanInput {
  q: Queryable;
  realm: Pick<RealmRow, 'id' | 'name'>;
  publicOrigin: string;
  mode: ImportMode;
  rules: PolicyRuleOptions;
  /** The caller's permissions at realm scope. */
  permissions: ReadonlySet<string>;
}

export async function planImport(
  input: PlanInput,
  doc: ConfigDocument,
  readErrors: PlanError[],
): Promise<Plan> {
  const { q, realm, mode } = input;
  const errors = [...readErrors];
  const needed = new Set<string>();
  const reconcile = mode === 'reconcile';

  // ---- policy (Import semantics 4) ----
  const stored = await currentPolicy(q, realm.id);
  const policyView: PolicyPlanView = { action: 'absent', current_revision: stored.revision, sections: [] };
  let policyChanges = false;
  if (doc.policy.given) {
    const p = planPolicy(stored.document, doc.policy.patch, defaultRealmPolicy(), input.rules);
    for (const i of p.issues)
      errors.push({ path: jsonPointer(i.path, '/policy'), code: i.code, detail: i.detail });
    policyChanges = p.issues.length === 0 && p.changed;
    policyView.action = policyChanges ? 'update' : 'unchanged';
    policyView.sections = p.sections;
    const expected = doc.expectedPolicyRevision;
    if (policyChanges && expected === undefined)
      errors.push({
        path: '/expected_policy_revision',
        code: 'required',
        detail: `required when the policy changes (the current revision is ${stored.revision})`,
      });
    if (expected !== undefined && expected !== 0 && expected !== stored.revision)
      errors.push({
        path: '/expected_policy_revision',
        code: 'stale_revision',
        detail: `the current policy revision is ${stored.revision}`,
      });
    if (policyChanges) needed.add('realm.settings.write');
  }

  // ---- permissions ----
  const permissions = kind();
  const storedPermissions = new Map(
    (await listPermissions(q, realm.id, ALL)).map((p) => [p.name.toLowerCase(), p] as const),
  );
  for (const p of doc.permissions) {
    const existing = storedPermissions.get(p.input.name.toLowerCase());
    if (p.builtin || existing) {
      permissions.unchanged.push(p.input.name);
      if (
        existing &&
        (existing.description !== p.input.description || existing.sensitivity !== p.input.sensitivity)
      )
        permissions.differs.push(p.input.name);
    } else {
      permissions.create.push(p.input.name);
      needed.add('realm.roles.write');
    }
  }

  // ---- resources ----
  const resources = kind();
  const builtins = builtinResources(input.publicOrigin, realm.name);
  const rows = new Map(
    (await listResourceRows(q, realm.id)).map((r) => [r.audience, resourceFromRow(r)] as const),
  );
  const resourceUpdates = new Map<string, { id: string; input: ResourceInput }>();
  /** Declared scopes each audience will have once applied. */
  const declared = new Map<string, Set<string>>();
  for (const b of builtins) {
    declared.set(b.id, new Set(b.scopes.map((s) => s.name)));
    declared.set(b.audience, new Set(b.scopes.map((s) => s.name)));
  }
  for (const [aud, r] of rows) declared.set(aud, new Set(r.scopes.map((s) => s.name)));
  for (const r of doc.resources) {
    const aud = r.input.audience;
    if (builtins.some((b) => b.audience === aud)) {
      errors.push({
        path: `/resources/${r.index}/audience`,
        code: 'builtin_resource',
        detail: 'built-in resources are not part of a configuration document',
      });
      continue;
    }
    const current = rows.get(aud);
    if (!current) {
      resources.create.push(aud);
      declared.set(aud, new Set(r.input.scopes.map((s) => s.name)));
      needed.add('realm.resources.write');
      continue;
    }
    const next = mergedResource(current, r);
    if (!resourceDiffers(current, next)) resources.unchanged.push(aud);
    else if (reconcile) {
      resources.update.push(aud);
      resourceUpdates.set(aud, { id: current.id, input: next });
      declared.set(aud, new Set(next.scopes.map((s) => s.name)));
      needed.add('realm.resources.write');
    } else {
      resources.unchanged.push(aud);
      resources.differs.push(aud);
    }
  }

  // ---- clients ----
  const clients = kind();
  const storedClients = new Map(
    (await listClientRecords(q, realm.id, {}, null, ALL.limit)).map((c) => [c.client_id, c] as const),
  );
  const clientUpdates = new Map<string, DocClient>();
  const docClientTypes = new Map<string, string>();
  for (const c of doc.clients) {
    const id = c.input.clientId;
    const current = storedClients.get(id);
    if (!current) {
      clients.create.push(id);
      docClientTypes.set(id, c.input.type);
      needed.add('realm.clients.write');
      continue;
    }
    const diff = clientDifferences(current, c);
    if (diff.length === 0) clients.unchanged.push(id);
    else if (!reconcile) {
      clients.unchanged.push(id);
      clients.differs.push(id);
    } else if (current.builtin) {
      errors.push({
        path: `/clients/${c.index}`,
        code: 'builtin_client',
        detail: 'built-in clients cannot be changed',
      });
    } else {
      const immutable = diff.filter((d) => IMMUTABLE_CLIENT.includes(d));
      for (const m of immutable)
        errors.push({
          path: `/clients/${c.index}/${m}`,
          code: 'immutable',
          detail: 'cannot change on an existing client',
        });
      if (immutable.length === 0) {
        clients.update.push(id);
        clientUpdates.set(id, c);
        needed.add('realm.clients.write');
      }
    }
  }

  // ---- roles (realm-wide ones, matched by name) ----
  const roles = kind();
  const storedRoles = new Map(
    (await listRoles(q, realm.id, { kind: 'realm' }, ALL)).map((r) => [r.name, r] as const),
  );
  const roleUpdates = new Map<string, { row: RoleRow; role: DocRole }>();
  const knownPermission = (name: string) =>
    isKnownBuiltinPermission(name) ||
    storedPermissions.has(name.toLowerCase()) ||
    doc.permissions.some((p) => p.input.name.toLowerCase() === name.toLowerCase());
  for (const r of doc.roles) {
    r.input.permissions.forEach((p, j) => {
      if (!knownPermission(p))
        errors.push({
          path: `/roles/${r.index}/permissions/${j}`,
          code: 'unknown_permission',
          detail: 'neither a built-in permission, a registered one, nor one this document registers',
        });
    });
    const row = storedRoles.get(r.input.name);
    if (!row) {
      roles.create.push(r.input.name);
      needed.add('realm.roles.write');
      continue;
    }
    if (!roleDiffers(row, r)) roles.unchanged.push(r.input.name);
    else if (!reconcile) {
      roles.unchanged.push(r.input.name);
      roles.differs.push(r.input.name);
    } else if (row.builtin) {
      errors.push({
        path: `/roles/${r.index}`,
        code: 'builtin_role_immutable',
        detail: 'built-in roles cannot be changed',
      });
    } else if (r.input.scope !== undefined && r.input.scope !== row.scope) {
      errors.push({
        path: `/roles/${r.index}/scope`,
        code: 'immutable',
        detail: 'the scope of a role cannot change',
      });
    } else {
      roles.update.push(r.input.name);
      roleUpdates.set(r.input.name, { row, role: r });
      needed.add('realm.roles.write');
    }
  }

  // ---- client resource grants (Import semantics 5, 6) ----
  const grants = { create: [] as GrantRef[], update: [] as GrantRef[], unchanged: [] as GrantRef[] };
  const storedGrants = new Map<string, GrantRecord>();
  for (const g of await listGrantsOfRealm(q, realm.id)) storedGrants.set(`${g.clientId}\n${g.resourceId}`, g);
  const audiences = new Set([
    ...builtins.map((b) => b.audience),
    ...rows.keys(),
    ...doc.resources.map((r) => r.input.audience),
  ]);
  const grantChanges: Plan['grantChanges'] = [];
  for (const g of doc.grants) {
    const client = storedClients.get(g.clientId);
    if (!client && !docClientTypes.has(g.clientId)) {
      errors.push({
        path: g.path,
        code: 'unknown_client',
        detail: 'no such client in the realm or the document',
      });
      continue;
    }
    if (client?.builtin) {
      errors.push({
        path: g.path,
        code: 'builtin_client',
        detail: 'the grants of a built-in client cannot be changed',
      });
      continue;
    }
    const builtin = builtins.find((b) => b.id === g.resource);
    const scopes = declared.get(g.resource);
    if (
      !scopes ||
      (g.resource.startsWith('builtin:') && !builtin) ||
      (!builtin && builtins.some((b) => b.audience === g.resource))
    ) {
      errors.push({
        path: g.path,
        code: 'unknown_resource',
        detail:
          'no such resource in the realm or the document (built-in ones are builtin:account, builtin:admin, builtin:userinfo)',
      });
      continue;
    }
    const problems = grantProblems(g.spec, { declaredScopes: scopes, realmAudiences: audiences });
    if (problems.length > 0) {
      for (const p of problems)
        errors.push({
          path: g.path + (p.field.match(/[^.[\]]+/g) ?? []).map((s) => `/${s}`).join(''),
          code: p.code,
          ...(p.detail ? { detail: p.detail } : {}),
        });
      continue;
    }
    const ref = { client_id: g.clientId, resource: g.resource };
    const resourceId = builtin ? builtin.id : (rows.get(g.resource)?.id ?? null);
    const current = client && resourceId ? storedGrants.get(`${client.client_id}\n${resourceId}`) : undefined;
    if (!current) grants.create.push(ref);
    else if (grantUnchanged(g.spec, current)) {
      grants.unchanged.push(ref);
      continue;
    } else grants.update.push(ref);
    grantChanges.push({ grant: g, stored: current });
    needed.add('realm.resources.write');
  }

  const missing = [...needed].filter((p) => !input.permissions.has(p)).sort();
  return {
    body: {
      format: 'service.realm-config.v1',
      mode,
      valid: errors.length === 0,
      policy: policyView,
      resources,
      clients,
      permissions,
      roles,
      client_resource_grants: grants,
      missing_permissions: missing,
      errors,
    },
    doc,
    policyRevision: stored.revision,
    policyChanges,
    resourceUpdates,
    clientUpdates,
    roleUpdates,
    grantChanges,
    needed,
  };
}
