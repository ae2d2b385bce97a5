// Issuing, listing and revoking client secrets against the test database: the active-secret limit
// under concurrency, what is stored, and what is audited.
import assert from 'node:assert/strict';
import { describe, type TestContext, test } from 'node:test';
import { OPERATOR_ACTOR } from '../../../src/audit/audit.types.ts';
import {
  clientSecretVerifier,
  hasClientSecretShape,
  issueClientSecret,
  listActiveSecrets,
  MAX_ACTIVE_CLIENT_SECRETS,
  revokeClientSecret,
} from '../../../src/clients/client-secrets.ts';
import type { ClientRow } from '../../../src/clients/clients.repo.ts';
import { Problem } from '../../../src/platform/http/problem.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { RACE_NEEDS_POSTGRES } from '../../harness/test-db.ts';

const actor = OPERATOR_ACTOR;
const MINUTE = 60_000;

async function setup(t: TestContext) {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const client = await h.createClient(realm, {
    clientId: 'backend',
    name: 'Backend',
    type: 'service',
    redirectUris: [],
    grantTypes: ['client_credentials'],
    tokenEndpointAuthMethod: 'client_secret_basic',
  });
  return { h, realm, client };
}

const issue = (h: Harness, realm: RealmRow, client: ClientRow, now = new Date(), expiresAt?: Date) =>
  h.ctx.db.tx((tx) =>
    issueClientSecret(tx, h.ctx.keyring!, realm.id, client.id, now, {
      actor,
      ...(expiresAt ? { expiresAt } : {}),
    }),
  );

const revoke = (h: Harness, realm: RealmRow, client: ClientRow, secretId: string, now = new Date()) =>
  h.ctx.db.tx((tx) => revokeClientSecret(tx, realm.id, client.id, secretId, now, { actor }));

async function problemOf(p: Promise<unknown>): Promise<Problem> {
  try {
    await p;
  } catch (e) {
    if (e instanceof Problem) return e;
    throw e;
  }
  assert.fail('expected a Problem');
}

const auditTypes = async (h: Harness, realm: RealmRow) =>
  (
    await h.ctx.db.query<{ type: string; data: Record<string, unknown>; target_id: string }>(
      `select type, data, target_id from audit_events where realm_id = $1 and type like 'client.secret.%'
       order by occurred_at, id`,
      [realm.id],
    )
  ).rows;

describe('clients › secrets', () => {
  test('case=an issued secret is shown once and stored only as a keyed verifier', async (t) => {
    const { h, realm, client } = await setup(t);
    const now = new Date();
    const issued = await issue(h, realm, client, now);
    assert.ok(hasClientSecretShape(issued.secret));
    assert.match(issued.id, /^csk_[0-9a-z]{26}$/);
    const rows = (
      await h.ctx.db.query<Record<string, unknown>>('select * from client_secrets where realm_id = $1', [
        realm.id,
      ])
    ).rows;
    assert.equal(rows.length, 1);
    const row = rows[0]!;
    assert.equal(row.client_row_id, client.id);
    assert.equal(Number(row.key_version), h.ctx.keyring!.activeVersion);
    assert.equal(row.verifier, clientSecretVerifier(h.ctx.keyring!, 1, realm.id, client.id, issued.secret));
    assert.ok(!JSON.stringify(row).includes(issued.secret.slice(6)));
    const [audit] = await auditTypes(h, realm);
    assert.equal(audit?.type, 'client.secret.issued');
    assert.equal(audit?.target_id, client.id);
    assert.deepEqual(audit?.data, { client_id: 'backend', secret_id: issued.id, expires_at: null });
    assert.ok(!JSON.stringify(audit).includes(issued.secret.slice(6)));
    // The issuance raises a credential_issued security alert in the same transaction.
    const alerts = await h.ctx.db.query<{ data: { signal: string; event_type: string } }>(
      `select data from outbox where realm_id = $1 and event_type = 'security.alert'`,
      [realm.id],
    );
    assert.ok(
      alerts.rows.some(
        (r) => r.data.signal === 'credential_issued' && r.data.event_type === 'client.secret.issued',
      ),
    );
  });

  test('case=a fourth active secret is a conflict until one is revoked or expires', async (t) => {
    const { h, realm, client } = await setup(t);
    const now = new Date();
    const first = await issue(h, realm, client, now);
    await issue(h, realm, client, now);
    const expiring = await issue(h, realm, client, now, new Date(now.getTime() + 10 * MINUTE));
    assert.equal(MAX_ACTIVE_CLIENT_SECRETS, 3);
    const p = await problemOf(issue(h, realm, client, now));
    assert.deepEqual([p.status, p.code], [409, 'conflict']);

    await revoke(h, realm, client, first.id, now);
    const replacement = await issue(h, realm, client, now);
    assert.equal((await problemOf(issue(h, realm, client, now))).status, 409);

    // After the expiring one lapses, its slot is free again.
    const later = new Date(now.getTime() + 11 * MINUTE);
    const listed = await listActiveSecrets(h.ctx.db, realm.id, client.id, later);
    assert.equal(listed.length, 2);
    assert.ok(!listed.some((s) => s.id === expiring.id));
    await issue(h, realm, client, later);
    assert.equal((await problemOf(issue(h, realm, client, later))).status, 409);
    assert.ok(
      (await listActiveSecrets(h.ctx.db, realm.id, client.id, later)).some((s) => s.id === replacement.id),
    );
  });

  test('case=concurrent issues never exceed the limit', { skip: RACE_NEEDS_POSTGRES }, async (t) => {
    const { h, realm, client } = await setup(t);
    await issue(h, realm, client);
    await issue(h, realm, client);
    const results = await Promise.allSettled([issue(h, realm, client), issue(h, realm, client)]);
    assert.equal(results.filter((r) => r.status === 'fulfilled').length, 1);
    const rejected = results.find((r) => r.status === 'rejected');
    assert.ok(rejected?.reason instanceof Problem && rejected.reason.status === 409);
    assert.equal((await listActiveSecrets(h.ctx.db, realm.id, client.id, new Date())).length, 3);

    // From none: five at once give exactly three.
    const other = await h.createClient(realm, {
      clientId: 'backend-2',
      name: 'Backend 2',
      type: 'service',
      redirectUris: [],
      tokenEndpointAuthMethod: 'client_secret_post',
    });
    const burst = await Promise.allSettled(Array.from({ length: 5 }, () => issue(h, realm, other)));
    assert.equal(burst.filter((r) => r.status === 'fulfilled').length, 3);
    assert.equal((await listActiveSecrets(h.ctx.db, realm.id, other.id, new Date())).length, 3);
  });

  test('case=list shows metadata only, oldest first', async (t) => {
    const { h, realm, client } = await setup(t);
    const t0 = new Date(Date.now() - 2 * MINUTE);
    const a = await issue(h, realm, client, t0);
    const b = await issue(
      h,
      realm,
      client,
      new Date(t0.getTime() + MINUTE),
      new Date(t0.getTime() + 60 * MINUTE),
    );
    const list = await listActiveSecrets(h.ctx.db, realm.id, client.id, new Date());
    assert.deepEqual(
      list.map((s) => s.id),
      [a.id, b.id],
    );
    assert.deepEqual(Object.keys(list[0]!).sort(), [
      'createdAt',
      'expiresAt',
      'id',
      'lastUsedAt',
      'revokedAt',
    ]);
    assert.equal(list[0]!.createdAt.getTime(), t0.getTime());
    assert.equal(list[1]!.expiresAt?.getTime(), t0.getTime() + 60 * MINUTE);
    assert.equal(list[0]!.lastUsedAt, null);
  });

  test('case=revoke is audited once, repeatable, and unknown ids are not found', async (t) => {
    const { h, realm, client } = await setup(t);
    const issued = await issue(h, realm, client);
    const at = new Date();
    const revoked = await revoke(h, realm, client, issued.id, at);
    assert.equal(revoked.revokedAt?.getTime(), at.getTime());
    const again = await revoke(h, realm, client, issued.id, new Date(at.getTime() + MINUTE));
    assert.equal(again.revokedAt?.getTime(), at.getTime());
    assert.deepEqual(
      (await auditTypes(h, realm)).map((a) => [a.type, a.data.secret_id]),
      [
        ['client.secret.issued', issued.id],
        ['client.secret.revoked', issued.id],
      ],
    );
    assert.deepEqual(await listActiveSecrets(h.ctx.db, realm.id, client.id, new Date()), []);
    assert.equal((await problemOf(revoke(h, realm, client, 'csk_unknown'))).status, 404);
  });

  test('case=another realm or client is simply not found', async (t) => {
    const { h, realm, client } = await setup(t);
    const issued = await issue(h, realm, client);
    const otherRealm = await h.createRealm();
    const p = await problemOf(
      h.ctx.db.tx((tx) =>
        issueClientSecret(tx, h.ctx.keyring!, otherRealm.id, client.id, new Date(), { actor }),
      ),
    );
    assert.deepEqual([p.status, p.code], [404, 'not_found']);
    assert.equal((await problemOf(revoke(h, otherRealm, client, issued.id))).status, 404);
    const sibling = await h.createClient(realm, {
      clientId: 'sibling',
      name: 'Sibling',
      type: 'web',
      redirectUris: ['https://app.example.com/cb'],
    });
    assert.equal((await problemOf(revoke(h, realm, sibling, issued.id))).status, 404);
    assert.equal((await listActiveSecrets(h.ctx.db, realm.id, client.id, new Date())).length, 1);
  });

  test('case=clients without secret authentication get none, and expiry must be ahead', async (t) => {
    const { h, realm, client } = await setup(t);
    const spa = await h.createClient(realm, {
      clientId: 'spa',
      name: 'SPA',
      type: 'spa',
      redirectUris: ['https://spa.example.com/cb'],
    });
    const p = await problemOf(issue(h, realm, spa));
    assert.deepEqual([p.status, p.code], [409, 'conflict']);
    const now = new Date();
    const v = await problemOf(issue(h, realm, client, now, now));
    assert.deepEqual(
      [v.status, v.code, v.extra?.errors?.[0]?.field],
      [422, 'validation_failed', 'expires_at'],
    );
    assert.deepEqual(await auditTypes(h, realm), []);
  });
});
