// The rules a connection's definition must meet (docs/federation.md, Connections), checked on the
// whole definition at creation and after every change: the issuer and endpoint URLs, what each
// kind and adapter needs, the secret its authentication method needs, and the role just-in-time
// accounts get.
import type { Environment } from '../platform/config/settings.ts';
import type { Queryable } from '../platform/db/db.ts';
import type { FieldError } from '../platform/http/problem.ts';
import { problem } from '../platform/http/problem.ts';
import { callerAuthority, ensureWithinCeiling } from '../roles/delegation.ts';
import type { Delegator } from '../roles/delegator.ts';
import { loadRoleGraph } from '../roles/index.ts';
import { BUILTIN_ROLES } from '../roles/permissions.ts';
import { expand, permissionsOfSet } from '../roles/role-graph.ts';
import { type ConnectionConfig, type ConnectionRow, isMultiTenant, type Kind } from './connection.ts';
import { effectiveConfig, PRESETS } from './presets.ts';
import { normalCertificate } from './saml-sp-keys.ts';

const URL_MEMBERS = [
  'discovery_url',
  'authorization_endpoint',
  'token_endpoint',
  'userinfo_endpoint',
  'emails_endpoint',
  'metadata_url',
  'sso_url',
] as const satisfies readonly (keyof ConnectionConfig)[];

/**
 * An absolute https URL without credentials or fragment; http only outside production (a provider
 * on the developer's machine, or a test's stand-in). The issuer may carry the {tenant} placeholder.
 */
export function upstreamUrlProblem(raw: string, environment: Environment, field: string): FieldError | null {
  const bad = (detail: string): FieldError => ({ field, code: 'invalid_url', detail });
  if (/[\s\\\p{Cc}]/u.test(raw)) return bad('no spaces, backslashes or control characters');
  let url: URL;
  try {
    url = new URL(raw.replaceAll('{tenant}', 'tenant'));
  } catch {
    return bad('an absolute https URL');
  }
  if (url.username || url.password || url.hash || raw.includes('#')) return bad('no credentials or fragment');
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && environment !== 'production') return null;
  return bad(environment === 'production' ? 'https is required in production' : 'an http or https URL');
}

/** The kind a connection of this adapter has; an adapter other than generic fixes it. */
export function kindFor(adapter: ConnectionRow['adapter'], given: Kind | null): Kind | FieldError {
  const preset = PRESETS[adapter];
  if (adapter === 'generic') return given ?? preset.kind;
  if (given !== null && given !== preset.kind)
    return { field: 'kind', code: 'not_allowed', detail: `the ${adapter} adapter is ${preset.kind}` };
  return preset.kind;
}

type Definition = Pick<ConnectionRow, 'adapter' | 'kind' | 'issuer' | 'config'> & { hasSecret: boolean };

/**
 * A SAML connection: the IdP's entity id (any URI, not always a URL) as the issuer, its single
 * sign-on service and at least one signing certificate that parses.
 */
function samlProblems(d: Definition): FieldError[] {
  const errors: FieldError[] = [];
  if (/[\s\p{Cc}]/u.test(d.issuer))
    errors.push({
      field: 'issuer',
      code: 'invalid',
      detail: 'the IdP entity id has no spaces or control characters',
    });
  if (!d.config.sso_url)
    errors.push({
      field: 'config.sso_url',
      code: 'required',
      detail: 'the IdP single sign-on URL (or metadata)',
    });
  const certs = d.config.idp_certificates ?? [];
  if (certs.length === 0)
    errors.push({
      field: 'config.idp_certificates',
      code: 'required',
      detail: 'the IdP signing certificate (or metadata)',
    });
  if (certs.some((c) => normalCertificate(c) === null))
    errors.push({ field: 'config.idp_certificates', code: 'invalid', detail: 'X.509 certificates in PEM' });
  for (const m of [
    'client_id',
    'scopes',
    'discovery_url',
    'authorization_endpoint',
    'token_endpoint',
    'store_tokens',
  ] as const)
    if (d.config[m] !== undefined)
      errors.push({ field: `config.${m}`, code: 'not_allowed', detail: 'not a member of a SAML connection' });
  return errors;
}

/** Every rule of the definition at once, so an administrator sees all that is wrong. */
export function definitionProblems(d: Definition, environment: Environment): FieldError[] {
  const errors: FieldError[] = [];
  const issuerProblem = d.kind === 'saml' ? null : upstreamUrlProblem(d.issuer, environment, 'issuer');
  if (issuerProblem) errors.push(issuerProblem);
  const config = effectiveConfig(d);
  for (const m of URL_MEMBERS) {
    const v = d.config[m];
    if (v === undefined) continue;
    const p = upstreamUrlProblem(v, environment, `config.${m}`);
    if (p) errors.push(p);
  }
  if (d.kind === 'saml') return [...errors, ...samlProblems(d)];
  if (!d.config.client_id)
    errors.push({ field: 'config.client_id', code: 'required', detail: 'the client id the upstream issued' });
  if (d.kind === 'oauth2') {
    for (const m of ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint'] as const)
      if (!config[m])
        errors.push({
          field: `config.${m}`,
          code: 'required',
          detail: 'a plain OAuth 2.0 connection names it',
        });
    if (isMultiTenant(d.issuer))
      errors.push({ field: 'issuer', code: 'not_allowed', detail: '{tenant} is for OpenID Connect issuers' });
  }
  if (d.kind === 'oidc' && isMultiTenant(d.issuer) && !config.discovery_url)
    errors.push({
      field: 'config.discovery_url',
      code: 'required',
      detail: 'a {tenant} issuer is discovered at an explicit discovery_url',
    });
  const method = config.token_endpoint_auth_method;
  if (method === 'apple_client_secret' && (!config.team_id || !config.key_id))
    errors.push({ field: 'config.team_id', code: 'required', detail: 'Apple needs team_id and key_id' });
  if (method !== 'none' && !d.hasSecret)
    errors.push({
      field: 'client_secret',
      code: 'required',
      detail: `token_endpoint_auth_method ${method} needs client_secret or client_secret_ref`,
    });
  return errors;
}

/**
 * jit_default_role_id: a realm role for a realm-wide connection, a role usable in the organization
 * for one of its connections; never the built-in realm-admin or owner role; and, like any role
 * handed out, within what the caller holds there (the delegation ceiling, docs/api-roles.md).
 */
export async function checkJitRole(
  q: Queryable,
  realmId: string,
  roleId: string,
  organizationId: string | null,
  caller: Delegator,
  now: Date,
): Promise<void> {
  const graph = await loadRoleGraph(q, realmId);
  const role = graph.get(roleId);
  const refuse = (detail: string) =>
    problem.validation([{ field: 'jit_default_role_id', code: 'unknown_role', detail }]);
  if (!role) throw refuse('no such role');
  if (
    role.builtin &&
    (role.name === BUILTIN_ROLES.realmAdmin.name || role.name === BUILTIN_ROLES.orgOwner.name)
  )
    throw refuse(`${role.name} is never given to accounts a sign-in creates`);
  if (organizationId === null ? role.scope !== 'realm' : role.scope !== 'organization')
    throw refuse(organizationId === null ? 'a realm role' : 'an organization role');
  if (role.projectId !== null || (role.organizationId !== null && role.organizationId !== organizationId))
    throw refuse('a role of another boundary');
  const authority = await callerAuthority(
    q,
    realmId,
    caller,
    { orgId: organizationId, projectId: null },
    now,
  );
  ensureWithinCeiling(authority, permissionsOfSet(graph, expand(graph, [roleId])));
}
