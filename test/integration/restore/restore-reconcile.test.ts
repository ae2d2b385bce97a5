// Restore without resurrection (document 2, "Backup and restore"; "Restore marker"): a backup is
// taken, things are revoked, the log is exported, the backup restored, marked and reconciled; then
// through the token endpoint, the account API and sign-in nothing revoked after the backup works
// again, and what was valid still is.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeJwt } from 'jose';
import { decodeOperatorInput } from '../../../src/main/operator-operations.ts';
import {
  restoreBegin,
  restoreMarkerStatus,
  restoreReconcile,
  revocationLogExport,
} from '../../../src/main/restore-operations.ts';
import { setPassword } from '../../../src/users/users.repo.ts';
import {
  bearer,
  recoveryCodeSignIn,
  recoverySetup,
  redeem,
  refresh,
  tokensFor,
} from '../../harness/recovery-kit.ts';
import { backupRealm } from '../../harness/restore-kit.ts';
import { audits, PASSWORD, passwordSignIn, rows } from '../../harness/signin-kit.ts';
import { oauthPost } from '../../harness/token-kit.ts';

type Op =
  | typeof restoreBegin
  | typeof restoreReconcile
  | typeof revocationLogExport
  | typeof restoreMarkerStatus;
// The operations as identity-cli runs them: the input decoded, then run on the deployment.
// biome-ignore lint/suspicious/noExplicitAny: each operation reads its own decoded input
const operate = (h: { ctx: any }, op: Op, input: Record<string, unknown>) =>
  // biome-ignore lint/suspicious/noExplicitAny: see above
  (op as any).run(h.ctx, decodeOperatorInput(op as any, input)) as Promise<any>;

test('nothing revoked after the backup comes back after restore-reconcile; what was valid still is', async (t) => {
  const s = await recoverySetup(t);
  const { h } = s;
  const me = s.accountAudience;
  const revokedFamily = await tokensFor(s, me, 'totp');
  const rotated = await tokensFor(s, me, 'totp');
  const revokedAccess = await tokensFor(s, me, 'totp');
  const endedSession = await tokensFor(s, me, 'totp');
  const kept = await tokensFor(s, me, 'totp');
  const spentCode = s.recoveryCodes[0] as string;
  const sessionsOf = async (token: string) => bearer(s, token, 'GET', '/me/sessions');
  const backup = await backupRealm(h, s.realm.id);

  // After the backup: a family revoked, a refresh token rotated, an access token revoked, a session
  // ended, a recovery code spent, the password changed.
  const revoke = (token: string) => oauthPost(h, s.realm, 'revoke', { token }, s.creds);
  assert.equal((await revoke(revokedFamily.refresh_token)).status, 200);
  assert.equal((await refresh(s, rotated.refresh_token, me)).status, 200);
  assert.equal((await revoke(revokedAccess.access_token)).status, 200);
  const sid = String(decodeJwt(endedSession.access_token).sid);
  assert.equal((await bearer(s, endedSession.access_token, 'DELETE', `/me/sessions/${sid}`)).status, 204);
  const restricted = await recoveryCodeSignIn(s, me);
  assert.equal((await redeem(s, restricted, me)).status, 200, 'the recovery code worked once');
  await h.ctx.db.tx(async (tx) =>
    setPassword(tx, s.realm.id, s.userId, await h.ctx.hasher.hash('a-new-password-42'), h.clock.now()),
  );

  const exported = await operate(h, revocationLogExport, {
    since: new Date(backup.takenAt.getTime() - 1000).toISOString(),
  });
  const logText = exported.records.map((r: unknown) => `${JSON.stringify(r)}\n`).join('');
  assert.equal(
    (await audits(h, s.realm, 'operations.revocation_log.exported')).length,
    0,
    'not a realm record',
  );
  assert.ok(
    (await rows(h, `select 1 from audit_events where type = 'operations.revocation_log.exported'`)).length >=
      1,
  );

  await backup.restore();
  // Restored: the revoked family refreshes again until reconciled (what the exercise guards against).
  assert.equal(
    (
      await rows(h, 'select 1 from refresh_families where realm_id = $1 and revoked_at is not null', [
        s.realm.id,
      ])
    ).length,
    0,
  );

  const begun = await operate(h, restoreBegin, {});
  assert.equal(begun.marked, true);
  const again = await operate(h, restoreBegin, {});
  assert.equal(again.already_marked, true, 'marking twice keeps the first marker');
  assert.equal(again.marked_at, begun.marked_at);
  const ready = await h.get('/health/ready');
  assert.equal(ready.status, 503);
  assert.equal(((await ready.json()) as { reason: string }).reason, 'restore_pending');

  const report = await operate(h, restoreReconcile, { log: logText });
  assert.equal(report.restore_marker_cleared, true);
  assert.ok(report.applied.refresh_family_revoked >= 1, JSON.stringify(report));
  assert.ok(report.applied.refresh_rotated >= 1, JSON.stringify(report));
  assert.ok(report.applied.recovery_code_consumed >= 1, JSON.stringify(report));
  assert.ok(report.applied.password_changed >= 1, JSON.stringify(report));
  assert.ok(report.sessions_revoked >= 1, JSON.stringify(report));
  assert.equal(typeof report.proofs_invalidated.device_codes, 'number');
  // Pushed authorization requests exist now (RFC 9126): they are ended too, even when none is pending.
  assert.equal(typeof report.proofs_invalidated.pushed_authorization_requests, 'number');
  assert.equal(typeof report.proofs_invalidated.saml_request_states, 'number');
  assert.equal(typeof report.proofs_invalidated.saml_idp_request_states, 'number');
  assert.equal((await operate(h, restoreMarkerStatus, {})).marked, false);
  const readyAfter = await h.get('/health/ready');
  assert.notEqual(((await readyAfter.json()) as { reason?: string }).reason, 'restore_pending');
  const reconciled = await rows(
    h,
    `select category from audit_events where type = 'operations.restore.reconciled'`,
  );
  assert.equal(reconciled.at(-1)?.category, 'emergency');

  // Through the public interfaces.
  assert.equal(
    (await refresh(s, revokedFamily.refresh_token, me)).body.error,
    'invalid_grant',
    'revoked family',
  );
  assert.equal((await refresh(s, rotated.refresh_token, me)).body.error, 'invalid_grant', 'rotated token');
  assert.equal((await sessionsOf(revokedAccess.access_token)).status, 401, 'revoked access token');
  assert.equal((await sessionsOf(endedSession.access_token)).status, 401, 'ended session');
  s.recoveryCodes.unshift(spentCode);
  await assert.rejects(recoveryCodeSignIn(s, me), /not completed/, 'the spent recovery code');
  const old = await passwordSignIn(h, s.realm.name, 'web-app', 'alice@example.com', PASSWORD, {
    resource: [me],
  });
  assert.notEqual(old.state.body.status, 'completed', 'the old password alone completes nothing');
  const user = await rows(h, 'select required_actions from users where realm_id = $1 and id = $2', [
    s.realm.id,
    s.userId,
  ]);
  assert.ok((user[0]?.required_actions as string[] | undefined)?.includes('update_password'));

  assert.equal((await sessionsOf(kept.access_token)).status, 200, 'the untouched token still works');
  assert.equal((await refresh(s, kept.refresh_token, me)).status, 200, 'and still refreshes');
});

test('restore-reconcile refuses a malformed log, a truncated last line and no option, changing nothing', async (t) => {
  const s = await recoverySetup(t);
  const { h } = s;
  await operate(h, restoreBegin, {});
  const line = JSON.stringify({
    seq: 1,
    kind: 'grant_revoked',
    realm_id: s.realm.id,
    logged_at: new Date().toISOString(),
    record: { grant_id: 'x' },
  });
  await assert.rejects(operate(h, restoreReconcile, {}), /--log FILE, --invalidate-all-sessions/);
  await assert.rejects(
    operate(h, restoreReconcile, { log: `${line}\n{"seq": 2` }),
    /line 2: the last line is truncated/,
  );
  await assert.rejects(
    operate(h, restoreReconcile, { log: `${line}\nnot json\n` }),
    /line 2: not a JSON object/,
  );
  await assert.rejects(
    operate(h, restoreReconcile, { log: `${line.replace('grant_revoked', 'grant_forgotten')}\n` }),
    /line 1: unknown kind "grant_forgotten"/,
  );
  assert.equal((await operate(h, restoreMarkerStatus, {})).marked, true, 'the marker stays');
  const kept = await tokensFor(s, s.accountAudience, 'totp');
  const report = await operate(h, restoreReconcile, { invalidate_all_sessions: true });
  assert.ok(report.sessions_revoked >= 1);
  assert.ok(report.refresh_families_revoked >= 1);
  assert.equal((await refresh(s, kept.refresh_token, s.accountAudience)).body.error, 'invalid_grant');
});
