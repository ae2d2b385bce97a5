// API keys in the revocation log (document 2, "Revocation log record kinds": automation credential
// revocations; "Backup and restore" 2: revoked API keys are re-applied). Every path that revokes a
// key (DELETE /api-keys/{id}, a principal's deletion, its organization's deletion) appends the
// record in its own transaction, none when that rolls back; and a key revoked after a backup is
// revoked again by restore-reconcile, so it no longer authenticates.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { test } from 'node:test';
import { decodeOperatorInput } from '../../../src/main/operator-operations.ts';
import { restoreBegin, restoreReconcile, revocationLogExport } from '../../../src/main/restore-operations.ts';
import { seedOrganization } from '../../harness/org-kit.ts';
import { backupRealm } from '../../harness/restore-kit.ts';
import { audits, rows } from '../../harness/signin-kit.ts';
import { assign, type Body, createRole, setup } from '../roles/roles-kit.ts';

type Op = typeof restoreBegin | typeof restoreReconcile | typeof revocationLogExport;
// The operations as identity-cli runs them: the input decoded, then run on the deployment.
// biome-ignore lint/suspicious/noExplicitAny: each operation reads its own decoded input
const operate = (h: { ctx: any }, op: Op, input: Record<string, unknown>) =>
  // biome-ignore lint/suspicious/noExplicitAny: see above
  (op as any).run(h.ctx, decodeOperatorInput(op as any, input)) as Promise<any>;

async function keySetup(t: TestContext) {
  const s = await setup(t);
  const { h, realm, api } = s;
  const startedAt = h.clock.now();
  const reader = await createRole(s.admin, {
    name: 'sp-reader',
    permissions: ['realm.service_principals.read'],
  });
  /** A principal (owned by `org` when given) holding the reader role, and one key of it. */
  const principalWithKey = async (org?: string) => {
    const p = await api('POST', '/service-principals', {
      name: 'Provisioner',
      ...(org ? { owner_organization_id: org } : {}),
    });
    assert.equal(p.status, 201, JSON.stringify(p.body));
    assert.equal((await assign(s.admin, reader, { type: 'service_principal', id: p.body.id })).status, 201);
    const k = await api('POST', '/api-keys', { service_principal_id: p.body.id, name: 'ci' });
    assert.equal(k.status, 201, JSON.stringify(k.body));
    return { principalId: p.body.id as string, keyId: k.body.id as string, key: k.body.key as string };
  };
  /** The status a read of the administration API answers with the key as bearer. */
  const useKey = async (key: string) =>
    (
      await h.get(`/api/v1/realms/${realm.name}/service-principals`, {
        headers: { authorization: `Bearer ${key}` },
      })
    ).status;
  /** The lines identity-cli revocation-log writes, as parsed JSON. */
  const exportLines = async (since = startedAt): Promise<Body[]> => {
    const out = await operate(h, revocationLogExport, {
      since: new Date(since.getTime() - 1000).toISOString(),
    });
    return (out.records as unknown[]).map((r) => JSON.parse(JSON.stringify(r)));
  };
  const keyLines = async (keyId: string) =>
    (await exportLines()).filter(
      (l) =>
        l.realm_id === realm.id &&
        l.kind === 'automation_credential_revoked' &&
        l.record.credential === 'api_key' &&
        l.record.credential_id === keyId,
    );
  /** The log file identity-cli revocation-log would write for the records since `takenAt`. */
  const shippedSince = async (takenAt: Date): Promise<string> => {
    const out = await operate(h, revocationLogExport, {
      since: new Date(takenAt.getTime() - 1000).toISOString(),
    });
    return out.records.map((r: unknown) => `${JSON.stringify(r)}\n`).join('');
  };
  return { ...s, principalWithKey, useKey, exportLines, keyLines, shippedSince };
}

test('DELETE /api-keys/{id} appends one automation_credential_revoked line naming the key, never its secret', async (t) => {
  const s = await keySetup(t);
  const { keyId, key, principalId } = await s.principalWithKey();
  assert.deepEqual(await s.keyLines(keyId), [], 'an active key has no line');
  assert.equal((await s.api('DELETE', `/api-keys/${keyId}`)).status, 204);
  const lines = await s.keyLines(keyId);
  assert.equal(lines.length, 1, JSON.stringify(lines));
  assert.equal(lines[0].record.service_principal_id, principalId);
  assert.ok(!Number.isNaN(Date.parse(lines[0].record.at)));
  // Revoking again changes nothing, so it logs nothing.
  assert.equal((await s.api('DELETE', `/api-keys/${keyId}`)).status, 204);
  assert.equal((await s.keyLines(keyId)).length, 1);
  // Neither the key nor the stored digest of its secret reaches the log.
  const [stored] = await rows(s.h, 'select secret_digest from api_keys where realm_id = $1 and id = $2', [
    s.realm.id,
    keyId,
  ]);
  const text = JSON.stringify(await s.exportLines());
  assert.equal(text.includes(key.slice(-43)), false);
  assert.equal(text.includes(String(stored?.secret_digest)), false);
});

test('a revocation that rolls back leaves no line', async (t) => {
  const s = await keySetup(t);
  const { keyId, key } = await s.principalWithKey();
  await assert.rejects(
    s.h.ctx.db.tx(async (tx) => {
      await tx.query('update api_keys set revoked_at = now() where realm_id = $1 and id = $2', [
        s.realm.id,
        keyId,
      ]);
      throw new Error('rolled back');
    }),
    /rolled back/,
  );
  assert.deepEqual(await s.keyLines(keyId), []);
  assert.equal(await s.useKey(key), 200, 'the key still works');
  // Changes that revoke nothing log nothing either.
  await s.h.ctx.db.query(`update api_keys set name = 'renamed' where realm_id = $1 and id = $2`, [
    s.realm.id,
    keyId,
  ]);
  assert.deepEqual(await s.keyLines(keyId), []);
});

test('deleting a principal, and deleting the organization that owns one, log each key they revoke', async (t) => {
  const s = await keySetup(t);
  const deleted = await s.principalWithKey();
  assert.equal((await s.api('DELETE', `/service-principals/${deleted.principalId}`)).status, 204);
  assert.equal((await s.keyLines(deleted.keyId)).length, 1, 'principal deletion');

  const org = await seedOrganization(s.h, s.realm);
  const owned = await s.principalWithKey(org);
  const second = await s.api('POST', '/api-keys', { service_principal_id: owned.principalId, name: 'two' });
  assert.equal(second.status, 201);
  const other = await s.principalWithKey();
  assert.equal(await s.useKey(owned.key), 200);
  assert.equal((await s.api('DELETE', `/organizations/${org}`)).status, 202);
  // The request transaction revokes the owned principal's keys (doc 2, Organization deletion).
  assert.equal(await s.useKey(owned.key), 401);
  assert.equal((await s.keyLines(owned.keyId)).length, 1, 'organization deletion');
  assert.equal((await s.keyLines(second.body.id)).length, 1, 'every key of the owned principal');
  const listed = await s.api('GET', `/api-keys?service_principal_id=${owned.principalId}`);
  assert.deepEqual(
    listed.body.items.map((k: Body) => k.state),
    ['revoked', 'revoked'],
  );
  const revokedAudits = (await audits(s.h, s.realm, 'api_key.revoked')).filter(
    (a) => a.data?.reason === 'organization_deleted',
  );
  assert.deepEqual(revokedAudits.map((a) => a.target_id).sort(), [owned.principalId, owned.principalId]);
  // A key of a principal the organization does not own is untouched.
  assert.equal(await s.useKey(other.key), 200);
  assert.deepEqual(await s.keyLines(other.keyId), []);
});

test('a key revoked after the backup is revoked again by restore-reconcile and no longer authenticates', async (t) => {
  const s = await keySetup(t);
  const revoked = await s.principalWithKey();
  const kept = await s.principalWithKey();
  const backup = await backupRealm(s.h, s.realm.id);

  assert.equal((await s.api('DELETE', `/api-keys/${revoked.keyId}`)).status, 204);
  assert.equal(await s.useKey(revoked.key), 401);
  const logText = await s.shippedSince(backup.takenAt);

  await backup.restore();
  // The restored database holds the key as the backup did: it works again until reconciled.
  assert.equal(await s.useKey(revoked.key), 200, 'the backup brings the revoked key back');

  await operate(s.h, restoreBegin, {});
  const report = await operate(s.h, restoreReconcile, { log: logText });
  assert.equal(report.restore_marker_cleared, true);
  assert.ok(report.applied.automation_credential_revoked >= 1, JSON.stringify(report));

  assert.equal(await s.useKey(revoked.key), 401, 'the revoked key stays revoked');
  assert.equal(await s.useKey(kept.key), 200, 'a key still valid stays valid');
  const again = await s.api('GET', `/api-keys?service_principal_id=${revoked.principalId}`);
  assert.deepEqual(
    again.body.items.map((k: Body) => [k.id, k.state]),
    [[revoked.keyId, 'revoked']],
  );
  // Reconciling the same log again changes nothing.
  await operate(s.h, restoreBegin, {});
  const twice = await operate(s.h, restoreReconcile, { log: logText });
  assert.equal(twice.applied.automation_credential_revoked ?? 0, 0, JSON.stringify(twice));
});

test('a principal disabled after the backup is disabled again by restore-reconcile; one disabled and enabled again stays enabled', async (t) => {
  const s = await keySetup(t);
  const disabled = await s.principalWithKey();
  const flipped = await s.principalWithKey();
  const backup = await backupRealm(s.h, s.realm.id);

  const logged = (await s.exportLines()).length;
  assert.equal((await s.api('POST', `/service-principals/${disabled.principalId}/disable`)).status, 200);
  const lines = (await s.exportLines()).slice(logged);
  assert.deepEqual(
    lines.map((l) => [l.kind, l.record.target, l.record.service_principal_id, l.record.state]),
    [['revocation', 'service_principal', disabled.principalId, 'disabled']],
  );
  const refused = await s.useKey(disabled.key);
  assert.notEqual(refused, 200, 'a disabled principal authenticates nothing');
  assert.equal((await s.api('POST', `/service-principals/${flipped.principalId}/disable`)).status, 200);
  assert.equal((await s.api('POST', `/service-principals/${flipped.principalId}/enable`)).status, 200);
  const logText = await s.shippedSince(backup.takenAt);

  await backup.restore();
  assert.equal(await s.useKey(disabled.key), 200, 'the backup brings the principal back enabled');
  await operate(s.h, restoreBegin, {});
  const report = await operate(s.h, restoreReconcile, { log: logText });
  assert.equal(report.restore_marker_cleared, true);

  assert.equal(await s.useKey(disabled.key), refused, 'disabled again');
  assert.equal((await s.api('GET', `/service-principals/${disabled.principalId}`)).body.state, 'disabled');
  assert.equal(await s.useKey(flipped.key), 200, 'its last logged state was enabled');
  assert.equal((await s.api('GET', `/service-principals/${flipped.principalId}`)).body.state, 'active');
});
