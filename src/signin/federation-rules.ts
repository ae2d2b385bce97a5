// The federation rules of the evaluation order (spec doc 1: step 2, primary authentication by an
// upstream provider and the SSO-only rule; step 8, enterprise SSO; the link_account action;
// docs/federation.md). Pure functions of the transaction and its facts.
import type { FederationFacts, ProviderOption } from './federation-facts.ts';
import type { Evaluation, Facts, NextAction } from './next-actions.types.ts';
import type { OrgFacts } from './organization-facts.ts';
import { maskEmail } from './state.ts';
import type { SigninTx } from './transaction.ts';

type StageResult = Evaluation | 'satisfied';

const facts = (f: Facts): FederationFacts =>
  f.federation ?? { realmProviders: [], orgProviders: {}, hrd: null, outcome: null };

const wire = (p: ProviderOption) => ({
  id: p.id,
  alias: p.alias,
  display_name: p.displayName,
  adapter: p.adapter,
});

export const externalRedirect = (providers: readonly ProviderOption[]): NextAction => ({
  type: 'external_redirect',
  required: true,
  fields: ['provider'],
  options: { providers: providers.map(wire) },
});

/** Only these providers may sign in to the organization; none usable for this client blocks. */
const onlyThrough = (providers: readonly ProviderOption[] | undefined): Evaluation =>
  providers && providers.length > 0
    ? { kind: 'actions', actions: [externalRedirect(providers)] }
    : { kind: 'blocked', reason: 'connection_not_allowed' };

/**
 * Step 2's SSO-only rule: an organization named at the start, or the one home-realm discovery
 * finds for the identifier's verified domain, that requires SSO offers only its providers.
 */
export function ssoOnlyPrimary(t: SigninTx, f: Facts): StageResult {
  const fed = facts(f);
  const named = f.organization.named;
  if (t.organization !== null && named?.active && named.requireSso)
    return onlyThrough(fed.orgProviders[named.id]);
  if (t.organization === null && fed.hrd?.requireSso)
    return onlyThrough(fed.orgProviders[fed.hrd.organizationId]);
  return 'satisfied';
}

/** The providers step 2 offers beside local methods: the discovered organization's first. */
export function offeredProviders(f: Facts): ProviderOption[] {
  const fed = facts(f);
  const discovered = fed.hrd ? (fed.orgProviders[fed.hrd.organizationId] ?? []) : [];
  const named = f.organization.named ? (fed.orgProviders[f.organization.named.id] ?? []) : [];
  const seen = new Set<string>();
  return [...discovered, ...named, ...fed.realmProviders].filter((p) => !seen.has(p.id) && seen.add(p.id));
}

/** Is the provider one this transaction may start now (the external_redirect action lists it)? */
export function startable(evaluation: Evaluation, providerId: string): boolean {
  if (evaluation.kind !== 'actions') return false;
  const redirect = evaluation.actions.find((a) => a.type === 'external_redirect');
  const providers = (redirect?.options?.providers ?? []) as { id: string }[];
  return providers.some((p) => p.id === providerId);
}

/** An upstream identity waits for an existing account to prove itself before it is linked. */
export function pendingLink(f: Facts): FederationFacts['outcome'] {
  const o = facts(f).outcome;
  return o?.status === 'link_pending' && o.linkingPolicy === 'prove_existing' ? o : null;
}

/** The link_account action: which provider waits, and the methods that may prove the account. */
export function linkAccount(f: Facts, methods: readonly NextAction[]): NextAction {
  const o = pendingLink(f);
  return {
    type: 'link_account',
    required: true,
    fields: [],
    options: {
      ...(o ? { provider: wire(o.provider) } : {}),
      ...(o?.conflict ? { conflict: true } : {}),
      ...(o?.email ? { email_hint: maskEmail(o.email) } : {}),
      methods: methods.map((m) => m.type).filter((m) => m !== 'identify'),
    },
  };
}

/** Was this sign-in's upstream one of the organization's own connections? */
const throughOrganization = (f: Facts, t: SigninTx, org: OrgFacts): boolean => {
  const o = facts(f).outcome;
  return t.completedFactors.includes('fed') && o?.status === 'authenticated' && o.providerOrgId === org.id;
};

/** Step 8: an organization that requires SSO is entered through one of its own providers. */
export function enterpriseSso(t: SigninTx, f: Facts, org: OrgFacts | null): StageResult {
  if (!org?.requireSso || throughOrganization(f, t, org)) return 'satisfied';
  return onlyThrough(facts(f).orgProviders[org.id]);
}

/** A non-terminal condition the state reports (spec doc 1, Sign-in transaction state: notice). */
export function noticeOf(f: Facts): 'upstream_unavailable' | 'account_conflict' | null {
  const o = facts(f).outcome;
  if (o?.status === 'upstream_unavailable') return 'upstream_unavailable';
  if (o?.status === 'link_pending' && o.conflict) return 'account_conflict';
  return null;
}
