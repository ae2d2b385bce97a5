// The browser origins that may drive a realm's sign-in transactions (spec doc 1, Authentication
// 1): the service's own public origin and the allowed_origins of the realm's active clients. One
// rule for both uses: the Origin check on mutating browser steps (binding.ts) and the CORS
// answers of the transaction API (api/signin-cors.ts).
import { isClientOrigin } from '../clients/index.ts';
import { hasNul } from '../kernel/text.ts';
import type { Queryable } from '../platform/db/db.ts';

export async function isSigninOrigin(
  q: Queryable,
  publicOrigin: string,
  realmId: string,
  origin: string,
): Promise<boolean> {
  if (origin === '' || origin === 'null' || hasNul(origin)) return false;
  return origin === publicOrigin || isClientOrigin(q, realmId, origin);
}
