// The realm policy's impersonation section (spec doc 1, realm policy; defaults approval none,
// notify_customer true, allow_customer_opt_out true), read with the defaults filled in.
import type { Queryable } from '../platform/db/db.ts';
import { currentPolicy, policyValue } from '../realms/index.ts';

export interface ImpersonationSettings {
  /** Only `none` is served so far (docs/support-access.md); any other value refuses new grants. */
  approval: string;
  notifyCustomer: boolean;
  allowCustomerOptOut: boolean;
}

export async function impersonationSettings(q: Queryable, realmId: string): Promise<ImpersonationSettings> {
  const policy = await currentPolicy(q, realmId);
  const approval = policyValue(policy, 'impersonation', 'approval');
  const notify = policyValue(policy, 'impersonation', 'notify_customer');
  const optOut = policyValue(policy, 'impersonation', 'allow_customer_opt_out');
  return {
    approval: typeof approval === 'string' ? approval : 'none',
    notifyCustomer: typeof notify === 'boolean' ? notify : true,
    allowCustomerOptOut: typeof optOut === 'boolean' ? optOut : true,
  };
}
