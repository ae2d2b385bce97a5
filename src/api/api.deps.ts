// What the HTTP edge needs from the running process: the union of the flows' needs. main/ builds
// one record that satisfies it (AppContext) and hands it to every route registration.
import type { DecisionApiDeps } from '../decisions/decisions.deps.ts';
import type { OAuthDeps } from '../oauth/oauth.deps.ts';

export interface ApiDeps extends OAuthDeps, DecisionApiDeps {}
