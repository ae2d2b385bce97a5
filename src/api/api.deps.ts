// What the HTTP edge needs from the running process: the union of the flows' needs. main/ builds
// one record that satisfies it (AppContext) and hands it to every route registration.
import type { DecisionApiDeps } from '../decisions/decisions.deps.ts';
import type { HookAdminDeps } from '../hooks/index.ts';
import type { OAuthDeps } from '../oauth/oauth.deps.ts';
import type { WebhookDeps } from '../webhooks/index.ts';

export interface ApiDeps extends OAuthDeps, DecisionApiDeps {
  /** Webhook subscriptions: the resolver destinations are checked with and the operator's egress rules. */
  webhooks: WebhookDeps;
  /** Synchronous hooks: the same resolver and egress rules, checked on a hook's url. */
  hookAdmin: HookAdminDeps;
}
