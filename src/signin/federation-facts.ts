// What the evaluation stages need to know about upstream providers (spec doc 1, evaluation order
// steps 2 and 8; docs/federation.md), read in one statement: the active connections this client
// may use, realm-wide and of the organizations in play; the organization an email identifier's
// verified domain points to (home-realm discovery); and what an upstream said about this
// transaction (an outcome, a link waiting for proof, or an outage).
import type { ConnectionConfig } from '../identity-providers/index.ts';
import { jsonColumn, one, type Queryable } from '../platform/db/db.ts';
import type { OrganizationFacts } from './organization-facts.ts';
import type { SigninTx } from './transaction.ts';

export interface ProviderOption {
  id: string;
  alias: string;
  displayName: string;
  adapter: string;
  organizationId: string | null;
}

export interface FederationOutcome {
  providerId: string;
  provider: ProviderOption;
  /** The organization of the connection that answered (null: a realm-wide connection). */
  providerOrgId: string | null;
  status: 'upstream_unavailable' | 'link_pending' | 'authenticated';
  conflict: boolean;
  linkingPolicy: 'prove_existing' | 'none';
  /** The upstream's email address, while a link waits for proof. */
  email: string | null;
}

export interface FederationFacts {
  /** Active realm-wide connections this client may use. */
  realmProviders: ProviderOption[];
  /** Active connections of the organizations in play that this client may use, by organization. */
  orgProviders: Record<string, ProviderOption[]>;
  /** The organization whose verified email domain the identifier is in (home-realm discovery). */
  hrd: { organizationId: string; requireSso: boolean } | null;
  outcome: FederationOutcome | null;
  /**
   * Whether the transaction has an upstream record at all (an outcome whose connection is gone
   * has none to show); undefined where the facts were not read from the database.
   */
  recorded?: boolean;
}

export const NO_FEDERATION_FACTS: FederationFacts = {
  realmProviders: [],
  orgProviders: {},
  hrd: null,
  outcome: null,
};

interface ConnectionJson {
  id: string;
  alias: string;
  display_name: string;
  adapter: string;
  organization_id: string | null;
  config: ConnectionConfig;
}

/** Placeholders of the statement's parameters, so the account facts can read these in their statement. */
export interface FederationParams {
  realm: string;
  orgIds: string;
  domain: string;
  tx: string;
}

/** The statement's common table expression (`hrd`) and its columns, over `p`'s placeholders. */
export function federationSql(p: FederationParams): { cte: string; columns: string } {
  return {
    cte: `hrd as (
  select o.id, coalesce((o.policy ->> 'require_sso')::boolean, false) as require_sso
    from organization_domains d join organizations o on o.realm_id = d.realm_id and o.id = d.organization_id
   where d.realm_id = ${p.realm} and ${p.domain}::text is not null and d.domain = ${p.domain} and d.verified
     and o.state = 'active'
   limit 1)`,
    columns: `
  (select coalesce(json_agg(json_build_object('id', p.id, 'alias', p.alias, 'display_name', p.display_name,
            'adapter', p.adapter, 'organization_id', p.organization_id, 'config', p.config)
            order by lower(p.display_name), p.id), '[]')
     from identity_providers p
    where p.realm_id = ${p.realm} and p.state = 'active'
      and (p.organization_id is null or p.organization_id = any (${p.orgIds}::text[])
           or p.organization_id in (select id from hrd))) as connections,
  (select json_build_object('id', id, 'require_sso', require_sso) from hrd) as hrd,
  (select json_build_object('provider_id', f.provider_id, 'alias', p.alias, 'display_name', p.display_name,
            'adapter', p.adapter, 'org', p.organization_id, 'status', f.status,
            'conflict', f.conflict, 'policy', p.linking_policy, 'email', f.claims ->> 'email')
     from signin_federation f join identity_providers p on p.realm_id = f.realm_id and p.id = f.provider_id
    where f.realm_id = ${p.realm} and f.transaction_id = ${p.tx}) as outcome,
  exists (select 1 from signin_federation f where f.realm_id = ${p.realm} and f.transaction_id = ${p.tx}) as recorded`,
  };
}

const OWN = federationSql({ realm: '$1', orgIds: '$2', domain: '$3', tx: '$4' });
const SQL = `with ${OWN.cte} select ${OWN.columns}`;

/** The columns federationSql selects. */
export interface FederationRow {
  connections: unknown;
  hrd: unknown;
  outcome: unknown;
  recorded: boolean;
}

const parsed = jsonColumn;

/** The domain of an email identifier, for home-realm discovery. */
const domainOf = (identifier: string | null): string | null => {
  if (!identifier) return null;
  const at = identifier.lastIndexOf('@');
  return at > 0 && at < identifier.length - 1 ? identifier.slice(at + 1).toLowerCase() : null;
};

const allowedFor = (clientId: string) => (c: ConnectionJson) => {
  const clients = c.config?.client_ids ?? [];
  return clients.length === 0 || clients.includes(clientId);
};

const option = (c: ConnectionJson): ProviderOption => ({
  id: c.id,
  alias: c.alias,
  displayName: c.display_name,
  adapter: c.adapter,
  organizationId: c.organization_id,
});

/** The organization ids in play and the identifier's email domain: the statement's other parameters. */
export function federationArgs(
  t: SigninTx,
  organization: OrganizationFacts,
): { orgIds: string[]; domain: string | null } {
  const orgIds = [
    ...new Set(
      [organization.named?.id, t.organizationId, ...organization.choices.map((o) => o.id)].filter(
        (x): x is string => typeof x === 'string',
      ),
    ),
  ];
  return { orgIds, domain: domainOf(t.identifier) };
}

export async function loadFederationFacts(
  q: Queryable,
  t: SigninTx,
  organization: OrganizationFacts,
): Promise<FederationFacts> {
  const { orgIds, domain } = federationArgs(t, organization);
  return federationFactsOf(t, await one<FederationRow>(q, SQL, [t.realmId, orgIds, domain, t.id]));
}

/** The facts of the statement's row (read by loadFederationFacts or with the account facts). */
export function federationFactsOf(t: SigninTx, r: FederationRow): FederationFacts {
  const usable = parsed<ConnectionJson[]>(r.connections).filter(allowedFor(t.clientId));
  const orgProviders: Record<string, ProviderOption[]> = {};
  for (const c of usable) {
    if (c.organization_id === null) continue;
    orgProviders[c.organization_id] = [...(orgProviders[c.organization_id] ?? []), option(c)];
  }
  const hrd = r.hrd === null ? null : parsed<{ id: string; require_sso: boolean }>(r.hrd);
  const outcome =
    r.outcome === null
      ? null
      : parsed<{
          provider_id: string;
          alias: string;
          display_name: string;
          adapter: string;
          org: string | null;
          status: FederationOutcome['status'];
          conflict: boolean;
          policy: FederationOutcome['linkingPolicy'];
          email: string | null;
        }>(r.outcome);
  return {
    realmProviders: usable.filter((c) => c.organization_id === null).map(option),
    orgProviders,
    hrd: hrd ? { organizationId: hrd.id, requireSso: hrd.require_sso } : null,
    outcome: outcome
      ? {
          providerId: outcome.provider_id,
          provider: option({
            id: outcome.provider_id,
            alias: outcome.alias,
            display_name: outcome.display_name,
            adapter: outcome.adapter,
            organization_id: outcome.org,
            config: {},
          }),
          providerOrgId: outcome.org,
          status: outcome.status,
          conflict: outcome.conflict,
          linkingPolicy: outcome.policy,
          email: outcome.email,
        }
      : null,
    recorded: r.recorded,
  };
}
