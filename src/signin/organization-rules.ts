// The organization rules of the evaluation order (spec doc 1: step 7 organization selection, step
// 8 enterprise SSO (federation-rules.ts says how), and the organization policy among the MFA
// conditions; doc 2, Organization membership: only active memberships sign in to an
// organization). Pure functions of the transaction and its facts.
import { enterpriseSso } from './federation-rules.ts';
import type { Evaluation, Facts, NextAction } from './next-actions.types.ts';
import type { OrgFacts } from './organization-facts.ts';
import type { SigninTx } from './transaction.ts';

type StageResult = Evaluation | 'satisfied';

/** The transaction names an organization: chosen in the step or given as the start parameter. */
const names = (t: SigninTx): boolean => t.organizationId !== null || t.organization !== null;

/** This sign-in is for an organization: a requested resource needs one, or the start named one. */
export const wantsOrganization = (t: SigninTx, f: Facts): boolean => f.organization.required || names(t);

const usable = (o: OrgFacts | null): o is OrgFacts => o?.active === true && o.member;

/**
 * The organization this sign-in is for, once it is known and the account may use it: the named
 * one, or the account's only active membership (selected without asking). Null otherwise.
 */
export function organizationInEffect(t: SigninTx, f: Facts): OrgFacts | null {
  if (!wantsOrganization(t, f)) return null;
  const { named, choices } = f.organization;
  if (names(t)) return usable(named) ? named : null;
  return choices.length === 1 ? (choices[0] ?? null) : null;
}

/** The organization policy's mfa_required counts once the organization is known. */
export const organizationRequiresMfa = (t: SigninTx, f: Facts): boolean =>
  organizationInEffect(t, f)?.mfaRequired ?? false;

/** Step 7: the organization the tokens will be for. */
export function organizationStage(t: SigninTx, f: Facts): StageResult {
  if (!wantsOrganization(t, f)) return 'satisfied';
  const { named, choices } = f.organization;
  if (names(t)) {
    // Unknown, inactive, or no active membership: one answer, so nothing is learned about others.
    return usable(named) ? 'satisfied' : { kind: 'blocked', reason: 'organization_access_denied' };
  }
  if (choices.length === 0) return { kind: 'blocked', reason: 'no_organization' };
  if (choices.length === 1) return 'satisfied';
  const select: NextAction = {
    type: 'select_organization',
    required: true,
    fields: ['organization_id'],
    options: {
      organizations: choices.map((o) => ({ id: o.id, slug: o.slug, display_name: o.displayName })),
    },
  };
  return { kind: 'actions', actions: [select] };
}

/** Step 8: an organization that requires SSO is entered through its own upstream providers only. */
export const enterpriseSsoStage = (t: SigninTx, f: Facts): StageResult =>
  enterpriseSso(t, f, organizationInEffect(t, f));

/** The transaction as completion sees it: the organization in effect recorded as chosen. */
export const withOrganization = (t: SigninTx, f: Facts): SigninTx => ({
  ...t,
  organizationId: organizationInEffect(t, f)?.id ?? null,
});
