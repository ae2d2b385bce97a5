// Support access issues handoff codes redeemed at the token endpoint, so it needs what the OAuth
// flows need.
import type { OAuthDeps } from '../oauth/oauth.deps.ts';

export type SupportDeps = OAuthDeps;
