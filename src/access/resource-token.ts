// A JWT access token of this realm for one of its registered resources, verified offline:
// introspection and the decision API both take these and never the built-in audiences (the
// administration, account and UserInfo APIs check their own tokens).

import { issuerOf } from '../kernel/audiences.ts';
import type { Config } from '../platform/config/settings.ts';
import { builtinResources } from '../resources/builtin-resources.ts';
import type { RealmRef } from '../resources/index.ts';
import type { AccessTokenVerifier, VerifiedAccessToken } from './verify-access-token.ts';

/** What verifying a resource's token needs: the public origin and the offline verifier. */
export interface ResourceTokenDeps {
  config: Pick<Config, 'server'>;
  tokenVerifier: AccessTokenVerifier;
}

export const isBuiltinAudience = (app: ResourceTokenDeps, realm: RealmRef, aud: string): boolean =>
  builtinResources(app.config.server.publicOrigin, realm.name).some((r) => r.audience === aud);

/** The verified token and its audience; null when invalid or for a built-in audience. */
export async function verifyResourceToken(
  app: ResourceTokenDeps,
  realm: RealmRef,
  token: string,
  /** Introspection shows sender-constrained tokens with their cnf; the decision API does not take them. */
  opts: { senderConstrained?: boolean } = {},
): Promise<{ token: VerifiedAccessToken; audience: string } | null> {
  const v = await app.tokenVerifier.verifyOwnAudience(token, {
    realmName: realm.name,
    issuer: issuerOf(app.config.server.publicOrigin, realm.name),
    senderConstrained: opts.senderConstrained === true,
  });
  if (!v.ok) return null;
  const aud = v.token.audiences[0];
  if (aud === undefined || isBuiltinAudience(app, realm, aud)) return null;
  return { token: v.token, audience: aud };
}
