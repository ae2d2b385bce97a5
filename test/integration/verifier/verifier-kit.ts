// A running server for the verifier package's tests (packages/verifier): its public origin is its
// listener, so the issuer, key set, introspection and session-event addresses are all reachable; a
// resource the tokens are for, an introspector of it, a stream reader, a user with a JWT access
// token from a real sign-in, and an administrator who can end the user's sessions.
import type { TestContext } from 'node:test';
import { CLI_CLIENT_ID } from '../../../src/clients/builtin-clients.ts';
import type { ClientRow } from '../../../src/clients/clients.repo.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { type ApiCallerKit, apiCaller, cliSignIn } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { PASSWORD } from '../../harness/signin-kit.ts';
import { registerIntrospector, seedGrant, seedResource, seedServiceClient } from '../../harness/token-kit.ts';
import { type StreamReader, streamReader } from '../session-events/stream-kit.ts';

export const AUDIENCE = 'https://orders.example.test';

export interface VerifierKit {
  h: Harness;
  realm: RealmRow;
  issuer: string;
  reader: StreamReader;
  introspector: { clientId: string; secret: string };
  admin: ApiCallerKit;
  /** A new user signed in for AUDIENCE. */
  subject(): Promise<{ userId: string; token: string; sessionId: string }>;
  /** Ends every session of the user through the administration API (account-wide revocation). */
  revokeSessions(userId: string): Promise<void>;
}

export async function verifierKit(t: TestContext): Promise<VerifierKit> {
  const h = await startHarness(t, { publicOriginIsListener: true });
  const realm = await h.createRealm();
  const issuer = `${h.ctx.config.server.publicOrigin}/realms/${realm.name}`;
  const resourceId = await seedResource(h, realm, { audience: AUDIENCE });
  const cli = (
    await h.ctx.db.query<ClientRow>('select * from clients where realm_id = $1 and client_id = $2', [
      realm.id,
      CLI_CLIENT_ID,
    ])
  ).rows[0];
  if (!cli) throw new Error('no identity-cli client');
  await seedGrant(h, realm, cli, resourceId, { scopes: [] });
  const rs = await seedServiceClient(h, realm, 'orders-introspector');
  await registerIntrospector(h, realm, resourceId, rs.client);
  const admin = await apiCaller(h, realm);
  return {
    h,
    realm,
    issuer,
    reader: await streamReader(h, realm),
    introspector: { clientId: rs.creds.clientId, secret: rs.creds.secret },
    admin,
    async subject() {
      const email = `buyer-${Math.random().toString(36).slice(2, 10)}@example.com`;
      const user = await h.createUser(realm, { email, password: PASSWORD });
      const tokens = await cliSignIn(h, realm, { id: user.id, email }, { resources: [AUDIENCE] });
      return { userId: user.id, token: tokens.accessToken, sessionId: tokens.sessionId };
    },
    async revokeSessions(userId) {
      const res = await admin.call('POST', `/users/${userId}/revoke-sessions`, {});
      if (res.status !== 200) throw new Error(`revoke-sessions: ${res.status} ${await res.text()}`);
    },
  };
}
