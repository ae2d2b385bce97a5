// Shared steps of the federation-transfer tests: two connections of the realm, accounts and links
// seeded in bulk straight into the tables (a transfer moves what exists, however it got there),
// and a second realm administrator for the two-person rule.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ApiCallerKit, apiCaller } from './api-kit.ts';
import { createConnection, type FederationSetup, federationSetup } from './federation-kit.ts';
import { type Row, rows } from './signin-kit.ts';

export interface TransferSetup extends FederationSetup {
  /** A second realm administrator: the reviewer. */
  reviewer: ApiCallerKit;
  oldIdp: Row;
  newIdp: Row;
}

export const OLD_ISSUER = 'https://old-idp.example.com';
export const NEW_ISSUER = 'https://new-idp.example.com';

const connection = (alias: string, issuer: string, extra: Record<string, unknown> = {}) => ({
  alias,
  display_name: alias,
  issuer,
  config: { client_id: `${alias}-client`, token_endpoint_auth_method: 'none', ...(extra.config as object) },
  ...Object.fromEntries(Object.entries(extra).filter(([k]) => k !== 'config')),
});

export async function transferSetup(
  t: TestContext,
  target: { issuer?: string; config?: Record<string, unknown> } = {},
): Promise<TransferSetup> {
  const s = await federationSetup(t);
  const reviewer = await apiCaller(s.h, s.realm);
  const oldIdp = await createConnection(s, connection('old-idp', OLD_ISSUER));
  const newIdp = await createConnection(
    s,
    connection('new-idp', target.issuer ?? NEW_ISSUER, { config: target.config ?? {} }),
  );
  return { ...s, reviewer, oldIdp, newIdp };
}

/**
 * The embedded database runs in this process, so a large seed holds the event loop; the server's
 * overdue keep-alive timers then close idle sockets just as the next request would reuse one
 * (ECONNRESET). A few turns of the loop let those closes land first.
 */
export const settle = () => sleep(200);

/** `n` accounts made by copying one real account's row; answers their ids. */
export async function bulkUsers(s: FederationSetup, n: number, tag: string): Promise<string[]> {
  const template = await s.h.createUser(s.realm, { email: `${tag}-template@example.com` });
  const cols = (
    await rows(
      s.h,
      `select column_name from information_schema.columns
        where table_schema = current_schema() and table_name = 'users' and column_name <> 'id'`,
    )
  ).map((r) => String(r.column_name));
  const list = cols.join(', ');
  const made = await rows(
    s.h,
    `insert into users (id, ${list})
     select 'usr_' || $3 || lpad(g::text, 8, '0'), ${list} from users, generate_series(1, $4::int) g
      where realm_id = $1 and id = $2 returning id`,
    [s.realm.id, template.id, tag, n],
  );
  assert.equal(made.length, n);
  await settle();
  return made.map((r) => String(r.id)).sort();
}

/** Links `subjects[i]` at the connection to `users[i]`; answers the link id of each subject. */
export async function bulkLinks(
  s: FederationSetup,
  providerId: string,
  issuer: string,
  users: readonly string[],
  subjects: readonly string[],
): Promise<Map<string, string>> {
  const made = await rows(
    s.h,
    `insert into linked_identities (realm_id, id, user_id, provider_id, upstream_issuer, upstream_subject,
       provenance, created_at, updated_at)
     select $1, 'lid_' || md5(random()::text || s), u, $2, $3, s, 'jit', now(), now()
       from unnest($4::text[], $5::text[]) as e(u, s) returning id, upstream_subject`,
    [s.realm.id, providerId, issuer, users, subjects],
  );
  await settle();
  return new Map(made.map((r) => [String(r.upstream_subject), String(r.id)]));
}

/** The links of a connection as (subject, user, id). */
export const linksAt = async (s: FederationSetup, providerId: string) =>
  (
    await rows(
      s.h,
      `select upstream_issuer, upstream_subject, user_id, id, provenance from linked_identities
        where realm_id = $1 and provider_id = $2 order by upstream_subject`,
      [s.realm.id, providerId],
    )
  ).map((r) => ({
    issuer: String(r.upstream_issuer),
    subject: String(r.upstream_subject),
    user: String(r.user_id),
    id: String(r.id),
    provenance: String(r.provenance),
  }));
