// organization {organization_id}: answers select_organization (spec doc 1, endpoint table and
// evaluation order step 7). Only the offered organizations (the account's active memberships in
// active organizations) can be entered. Any other choice is recorded as made, so the transaction
// stays pending and blocked with organization_access_denied, whatever the organization is: the
// answer never tells an unknown organization from one the account cannot use.

import { NO_NUL } from '../../kernel/text.ts';
import { object, string } from '../../platform/http/decode.ts';
import type { Step } from './step.ts';

const decode = object({ organization_id: string({ minLength: 1, maxBytes: 128, pattern: NO_NUL }) });

export const organizationStep: Step<{ organizationId: string }> = {
  path: 'organization',
  spendsBudgets: false,
  action: 'select_organization',
  decode,
  run: async (_q, t, body, ctx) => {
    const wanted = body.organizationId;
    // The slug of an offered organization names it too, as the start parameter may.
    const offered = ctx.facts.organization.choices.find(
      (o) => o.id === wanted || o.slug.toLowerCase() === wanted.toLowerCase(),
    );
    return { tx: { ...t, organizationId: offered?.id ?? wanted } };
  },
};
