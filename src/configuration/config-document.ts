// Reading a configuration document (spec doc 1, Configuration document; Value formats; Import
// semantics 3; Versioning 2) into its parts, each checked as its own API checks it, with every
// problem reported as a plan error at its JSON pointer instead of failing the request.
import { type CreateClientInput, decodeCreateClient, newClientProblems } from '../clients/index.ts';
import { jsonMembers, tryDecode } from '../platform/http/decode.ts';
import { type FieldError, Problem } from '../platform/http/problem.ts';
import { foldMemberName } from '../platform/http/strict-json.ts';
import {
  checkResourceInput,
  type GrantSpec,
  parseGrantSpec,
  type ResourceInput,
} from '../resources/index.ts';
import {
  decodePermission,
  decodeRole,
  isBuiltinPermissionName,
  isKnownBuiltinPermission,
  type PermissionInput,
  type RoleInput,
} from '../roles/index.ts';

export const CONFIG_FORMAT = 'service.realm-config.v1';

export interface PlanError {
  /** RFC 6901 pointer into the document. */
  path: string;
  code: string;
  detail?: string;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

const escapeSegment = (s: string | number) => String(s).replaceAll('~', '~0').replaceAll('/', '~1');
export const pointer = (...parts: (string | number)[]) => parts.map((p) => `/${escapeSegment(p)}`).join('');

/** A decoder's dotted field (`scopes[0].name`) as a pointer under `prefix`. */
export function fieldPointer(prefix: string, field: string): string {
  const parts = field.match(/[^.[\]]+/g) ?? [];
  return prefix + parts.map((p) => `/${escapeSegment(p)}`).join('');
}

const fieldErrors = (prefix: string, errors: readonly FieldError[]): PlanError[] =>
  errors.map((e) => ({
    path: fieldPointer(prefix, e.field),
    code: e.code,
    ...(e.detail ? { detail: e.detail } : {}),
  }));

export interface DocResource {
  index: number;
  input: ResourceInput;
  /** Wire names (lower case) the document gave: reconcile changes only these. */
  given: Set<string>;
}

export interface DocClient {
  index: number;
  input: CreateClientInput;
  given: Set<string>;
}

export interface DocPermission {
  index: number;
  input: PermissionInput;
  /** A name the service defines: matched, never created. */
  builtin: boolean;
}

export interface DocRole {
  index: number;
  input: RoleInput;
}

export interface DocGrant {
  path: string;
  clientId: string;
  /** The resource's audience or builtin:<name>. */
  resource: string;
  spec: GrantSpec;
}

export interface ConfigDocument {
  /** absent: leave the policy alone; null: reset to the defaults of a new realm (decision 14). */
  policy: { given: false } | { given: true; patch: unknown };
  expectedPolicyRevision: number | undefined;
  resources: DocResource[];
  clients: DocClient[];
  permissions: DocPermission[];
  roles: DocRole[];
  grants: DocGrant[];
}

const MEMBERS = [
  'format',
  'realm',
  'policy',
  'expected_policy_revision',
  'excluded',
  'resources',
  'clients',
  'permissions',
  'roles',
  'client_resource_grants',
] as const;

/** Members of a role that name objects of one environment (Import semantics 3). */
const ROLE_ENVIRONMENT_BOUND = [
  'organization_id',
  'project_id',
  'composite_role_ids',
  'incompatible_role_ids',
];
/** Members of a client that name objects of one environment. */
const CLIENT_ENVIRONMENT_BOUND = ['id', 'service_principal_id'];

/** Members given (not null, ASCII case folded). */
const givenNames = (o: Json) =>
  new Set(
    jsonMembers(o)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k]) => foldMemberName(k)),
  );

/** Takes out environment-bound members, reporting those set to something. */
function withoutBound(o: Json, bound: readonly string[], at: string, errors: PlanError[]): Json {
  // Without a prototype, a `__proto__` member stays a member the decoder refuses as unknown.
  const rest: Json = Object.create(null);
  for (const [k, v] of jsonMembers(o)) {
    const folded = foldMemberName(k);
    if (!bound.includes(folded)) {
      rest[k] = v;
      continue;
    }
    const empty = v === null || v === undefined || (Array.isArray(v) && v.length === 0);
    if (!empty)
      errors.push({
        path: `${at}${pointer(folded)}`,
        code: 'environment_bound',
        detail: 'identifiers of one environment cannot be imported',
      });
  }
  return rest;
}

function problemErrors(e: unknown): FieldError[] {
  if (e instanceof Problem) return e.extra?.errors ?? [{ field: '', code: e.code, detail: e.detail ?? '' }];
  throw e;
}

function list(doc: Json, name: string, errors: PlanError[]): unknown[] {
  const v = doc[name];
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v;
  errors.push({ path: pointer(name), code: 'type', detail: 'expected an array' });
  return [];
}

function readResources(items: unknown[], errors: PlanError[]): DocResource[] {
  const out: DocResource[] = [];
  const seen = new Set<string>();
  items.forEach((raw, index) => {
    const at = pointer('resources', index);
    const r = checkResourceInput(raw);
    if (!r.ok) {
      errors.push(...fieldErrors(at, r.errors));
      return;
    }
    if (seen.has(r.value.audience)) {
      errors.push({
        path: `${at}/audience`,
        code: 'duplicate',
        detail: 'another resource has this audience',
      });
      return;
    }
    seen.add(r.value.audience);
    out.push({ index, input: r.value, given: r.given });
  });
  return out;
}

function readClients(items: unknown[], env: 'development' | 'production', errors: PlanError[]): DocClient[] {
  const out: DocClient[] = [];
  const seen = new Set<string>();
  items.forEach((raw, index) => {
    const at = pointer('clients', index);
    if (!isObject(raw)) {
      errors.push({ path: at, code: 'type', detail: 'expected an object' });
      return;
    }
    const body = withoutBound(raw, CLIENT_ENVIRONMENT_BOUND, at, errors);
    const r = tryDecode(decodeCreateClient, body);
    if (!r.ok) {
      errors.push(...fieldErrors(at, r.errors));
      return;
    }
    const rules = newClientProblems(r.value, env);
    if (rules.length > 0) {
      errors.push(...fieldErrors(at, rules));
      return;
    }
    if (seen.has(r.value.clientId)) {
      errors.push({
        path: `${at}/client_id`,
        code: 'duplicate',
        detail: 'another client has this client_id',
      });
      return;
    }
    seen.add(r.value.clientId);
    out.push({ index, input: r.value, given: givenNames(body) });
  });
  return out;
}

function readPermissions(items: unknown[], errors: PlanError[]): DocPermission[] {
  const out: DocPermission[] = [];
  const seen = new Set<string>();
  items.forEach((raw, index) => {
    const at = pointer('permissions', index);
    const name = isObject(raw) && typeof raw.name === 'string' ? raw.name : null;
    let input: PermissionInput;
    let builtin = false;
    if (name !== null && isBuiltinPermissionName(name) && isKnownBuiltinPermission(name)) {
      // Import semantics 1: built-in names match and are reported unchanged.
      builtin = true;
      input = { name, description: null, sensitivity: 'normal' };
    } else {
      try {
        input = decodePermission(raw);
      } catch (e) {
        errors.push(...fieldErrors(at, problemErrors(e)));
        return;
      }
    }
    const key = input.name.toLowerCase();
    if (seen.has(key)) {
      errors.push({ path: `${at}/name`, code: 'duplicate', detail: 'another permission has this name' });
      return;
    }
    seen.add(key);
    out.push({ index, input, builtin });
  });
  return out;
}

function readRoles(items: unknown[], errors: PlanError[]): DocRole[] {
  const out: DocRole[] = [];
  const seen = new Set<string>();
  items.forEach((raw, index) => {
    const at = pointer('roles', index);
    if (!isObject(raw)) {
      errors.push({ path: at, code: 'type', detail: 'expected an object' });
      return;
    }
    const before = errors.length;
    const body = withoutBound(raw, ROLE_ENVIRONMENT_BOUND, at, errors);
    if (errors.length > before) return;
    let input: RoleInput;
    try {
      input = decodeRole(body);
    } catch (e) {
      errors.push(...fieldErrors(at, problemErrors(e)));
      return;
    }
    if (input.scope === 'project') {
      errors.push({
        path: `${at}/scope`,
        code: 'environment_bound',
        detail: 'a project role names its project, which is bound to one environment',
      });
      return;
    }
    if (seen.has(input.name)) {
      errors.push({ path: `${at}/name`, code: 'duplicate', detail: 'another role has this name' });
      return;
    }
    seen.add(input.name);
    out.push({ index, input });
  });
  return out;
}

function readGrants(v: unknown, errors: PlanError[]): DocGrant[] {
  if (v === undefined || v === null) return [];
  if (!isObject(v)) {
    errors.push({ path: pointer('client_resource_grants'), code: 'type', detail: 'expected an object' });
    return [];
  }
  const out: DocGrant[] = [];
  for (const [clientId, byResource] of Object.entries(v)) {
    const at = pointer('client_resource_grants', clientId);
    if (clientId.length < 1 || clientId.length > 128 || !/^[\x21-\x7e]+$/.test(clientId)) {
      errors.push({ path: at, code: 'pattern', detail: 'a client_id of 1 to 128 printable characters' });
      continue;
    }
    if (byResource === null) continue;
    if (!isObject(byResource)) {
      errors.push({ path: at, code: 'type', detail: 'expected an object of audience to GrantSpec' });
      continue;
    }
    for (const [resource, raw] of Object.entries(byResource)) {
      const path = `${at}${pointer(resource)}`;
      if (raw === null) continue;
      const r = parseGrantSpec(raw);
      if (!r.ok) errors.push(...fieldErrors(path, r.errors));
      else out.push({ path, clientId, resource, spec: r.value });
    }
  }
  return out;
}

/**
 * The document's parts, and every problem found reading them. `null` for a body that is not an
 * object (the caller answers 400).
 */
export function readConfigDocument(
  body: unknown,
  env: 'development' | 'production',
): { doc: ConfigDocument; errors: PlanError[] } | null {
  if (!isObject(body)) return null;
  const errors: PlanError[] = [];
  const doc: Json = Object.create(null);
  for (const [k, v] of jsonMembers(body)) {
    const folded = foldMemberName(k);
    if ((MEMBERS as readonly string[]).includes(folded)) doc[folded] = v;
    else errors.push({ path: pointer(k), code: 'unknown_member', detail: 'not a member of the document' });
  }
  const format = doc.format;
  if (format !== undefined && format !== null && format !== '' && format !== CONFIG_FORMAT)
    errors.push({ path: '/format', code: 'unsupported_format', detail: `"" or ${CONFIG_FORMAT}` });
  let expected: number | undefined;
  const e = doc.expected_policy_revision;
  if (e !== undefined && e !== null) {
    if (typeof e !== 'number' || !Number.isInteger(e) || e < 0 || e > 2_147_483_647)
      errors.push({ path: '/expected_policy_revision', code: 'type', detail: 'an integer >= 0' });
    else expected = e;
  }
  // `realm` and `excluded` are informational and ignored (Configuration document).
  const policy: ConfigDocument['policy'] =
    'policy' in doc ? { given: true, patch: doc.policy } : { given: false };
  if (policy.given && policy.patch !== null && !isObject(policy.patch))
    errors.push({ path: '/policy', code: 'type', detail: 'expected an object or null' });
  return {
    doc: {
      policy,
      expectedPolicyRevision: expected,
      resources: readResources(list(doc, 'resources', errors), errors),
      clients: readClients(list(doc, 'clients', errors), env, errors),
      permissions: readPermissions(list(doc, 'permissions', errors), errors),
      roles: readRoles(list(doc, 'roles', errors), errors),
      grants: readGrants(doc.client_resource_grants, errors),
    },
    errors,
  };
}
