// What the fault drills need in the database before `serve` and `worker` start: a realm with a web
// client and user, an administrator and an account caller, a service client, an introspector,
// and refresh-token families. Seeded through the in-process harness on the test file's database,
// or on a database of the drill's own (a private cluster it restarts).
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import type { Db } from '../../../src/platform/db/db.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import type { Harness } from '../../harness/harness.ts';
import { signinSetup } from '../../harness/signin-kit.ts';
import {
  clientSecret,
  codeFlow,
  seedGrant,
  seedResource,
  seedServiceClient,
} from '../../harness/token-kit.ts';

export const ORDERS = 'https://orders.example.com';
/** What the web client's sign-ins ask for: refresh tokens and an access token for ORDERS. */
export const CODE_START = { scope: 'openid orders:read', resource: [ORDERS] };

export type Creds = { clientId: string; secret: string };

export interface DrillSeed {
  h: Harness;
  realm: RealmRow;
  web: Creds;
  /** The web client's user, who signs in with PASSWORD. */
  email: string;
  service: Creds;
  introspector: Creds;
  adminToken: string;
  accountToken: string;
  /** An access token to introspect. */
  accessToken: string;
  /** Current refresh token of each family; the load rotates them. */
  refreshTokens: string[];
}

/** `db`: a migrated database of the drill's own; without it, the test file's database. */
export async function seedDrill(
  t: TestContext,
  families: number,
  opts: { db?: Db } = {},
): Promise<DrillSeed> {
  const { h, realm, client, user } = await signinSetup(t, opts.db ? { db: opts.db } : {});
  const web = { clientId: 'web-app', secret: await clientSecret(h, realm, client) };
  const orders = await seedResource(h, realm, { audience: ORDERS, scopes: ['orders:read'] });
  await seedGrant(h, realm, client, orders, { scopes: ['orders:read'] });
  const svc = await seedServiceClient(h, realm, 'batch-svc');
  await seedGrant(h, realm, svc.client, orders, {
    scopes: ['orders:read'],
    subjectTypes: ['service_principal'],
  });
  const api = await seedServiceClient(h, realm, 'orders-api');
  await h.ctx.db.query(
    'insert into resource_introspectors (realm_id, resource_id, client_row_id, created_at) values ($1, $2, $3, now())',
    [realm.id, orders, api.client.id],
  );
  const admin = await apiCaller(h, realm);
  const account = await apiCaller(h, realm, { audience: 'account', userId: user.id });
  const refreshTokens: string[] = [];
  let accessToken = '';
  for (let i = 0; i < families; i++) {
    const tokens = await codeFlow(h, realm, web, { start: CODE_START });
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    refreshTokens.push(tokens.body.refresh_token);
    accessToken = tokens.body.access_token;
  }
  return {
    h,
    realm,
    web,
    email: 'alice@example.com',
    service: svc.creds,
    introspector: api.creds,
    adminToken: admin.token,
    accountToken: account.token,
    accessToken,
    refreshTokens,
  };
}
