// The realm's after_sign_in hooks (docs/hooks.md): told of a completed sign-in once its
// transaction has committed. Their answers change nothing and a failure is only counted; the
// answer to the sign-in waits for them, at most the longest timeout_ms among them.
import { afterSignIn } from '../hooks/index.ts';
import type { SigninDeps } from './signin.deps.ts';
import type { SigninTx } from './transaction.ts';

export async function notifySignedIn(
  app: SigninDeps,
  t: SigninTx,
  kindsInUse: readonly string[] | undefined,
): Promise<void> {
  // A registration for a taken address only looks completed: no one signed in.
  if (t.status !== 'completed' || !t.userId || t.registrationDecoy) return;
  await afterSignIn(app.hooks, {
    realmId: t.realmId,
    clientId: t.clientId,
    kindsInUse,
    data: {
      transaction_id: t.id,
      user_id: t.userId,
      factors: t.completedFactors,
      organization_id: t.organizationId,
    },
  });
}
