// What the session-event tests share: a realm, a service principal that reads the stream with an
// admin-audience client-credentials token (role resource-server, which holds
// realm.session_events.read), and a user whose session can be ended through the account API.
import type { TestContext } from 'node:test';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { assignRealmRole, findRoleByName } from '../../../src/roles/builtin-roles.repo.ts';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { type Harness, type HarnessOptions, startHarness } from '../../harness/harness.ts';
import { oauthPost, seedGrant, seedServiceClient } from '../../harness/token-kit.ts';

export interface StreamReader {
  clientId: string;
  secret: string;
  principalId: string;
  token(): Promise<string>;
}

/** A service client with an admin-audience grant and, unless `roles` is empty, role resource-server. */
export async function streamReader(
  h: Harness,
  realm: RealmRow,
  roles: string[] = ['resource-server'],
): Promise<StreamReader> {
  const clientId = `events-${Math.random().toString(36).slice(2, 10)}`;
  const svc = await seedServiceClient(h, realm, clientId);
  await seedGrant(h, realm, svc.client, 'builtin:admin', { scopes: [], subjectTypes: ['service_principal'] });
  await h.ctx.db.tx(async (tx) => {
    for (const name of roles) {
      const role = await findRoleByName(tx, realm.id, name);
      if (!role) throw new Error(`no role ${name}`);
      await assignRealmRole(
        tx,
        {
          realmId: realm.id,
          roleId: role.id,
          subjectType: 'service_principal',
          subjectId: svc.principalId,
          source: 'test',
        },
        h.ctx.clock.now(),
      );
    }
  });
  return {
    clientId,
    secret: svc.creds.secret,
    principalId: svc.principalId,
    async token() {
      const r = await oauthPost(h, realm, 'token', { grant_type: 'client_credentials' }, svc.creds);
      if (r.status !== 200) throw new Error(`client credentials: ${JSON.stringify(r.body)}`);
      return r.body.access_token as string;
    },
  };
}

export interface StreamPage {
  status: number;
  body: { events?: Record<string, unknown>[]; next_cursor?: string; code?: string };
}

export async function readEvents(
  h: Harness,
  realm: RealmRow,
  token: string,
  query: Record<string, string> = {},
): Promise<StreamPage> {
  const qs = new URLSearchParams(query).toString();
  const res = await h.get(`/api/v1/realms/${realm.name}/session-events${qs ? `?${qs}` : ''}`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return { status: res.status, body: (await res.json()) as StreamPage['body'] };
}

export interface StreamKit {
  h: Harness;
  realm: RealmRow;
  reader: StreamReader;
  /** A user signed in to the account API: ending its session is a revocation. */
  member(): Promise<ApiCallerKit>;
  endSession(member: ApiCallerKit): Promise<void>;
}

export async function streamKit(t: TestContext, opts: HarnessOptions = {}): Promise<StreamKit> {
  const h = await startHarness(t, opts);
  const realm = await h.createRealm();
  const reader = await streamReader(h, realm);
  return {
    h,
    realm,
    reader,
    member: () => apiCaller(h, realm, { audience: 'account' }),
    async endSession(member) {
      const res = await member.call('DELETE', `/me/sessions/${member.sessionId}`);
      if (res.status !== 204) throw new Error(`ending the session: ${res.status} ${await res.text()}`);
    },
  };
}
