// Worker task tokens.cleanup: what ended goes after privacy.session_retention, what is live stays.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cleanupTokens } from '../../../src/sessions/token-cleanup.task.ts';
import { count, signinSetup } from '../../harness/signin-kit.ts';
import { clientSecret, codeFlow, oauthPost } from '../../harness/token-kit.ts';

test('ended sessions, grants, refresh families and revoked ids go after the retention; live ones stay', async (t) => {
  const { h, realm, client } = await signinSetup(t);
  const creds = { clientId: 'web-app', secret: await clientSecret(h, realm, client) };
  const live = await codeFlow(h, realm, creds);
  const ended = await codeFlow(h, realm, creds);
  // Logout everywhere for the second sign-in's session only: revoke it with its family.
  await oauthPost(h, realm, 'revoke', { token: ended.body.refresh_token }, creds);
  await h.ctx.db.query(
    `update sessions set revoked_at = now() where realm_id = $1 and id = (
       select session_id from refresh_families where realm_id = $1 and revoked_at is not null)`,
    [realm.id],
  );
  await oauthPost(h, realm, 'revoke', { token: live.body.access_token }, creds);
  const retention = h.ctx.config.privacy.sessionRetentionMs;
  const deps = { db: h.ctx.db, sessionRetentionMs: retention };
  const families = () => count(h, 'select 1 from refresh_families where realm_id = $1', [realm.id]);
  const sessions = () => count(h, 'select 1 from sessions where realm_id = $1', [realm.id]);
  const revocations = () => count(h, 'select 1 from token_revocations where realm_id = $1', [realm.id]);

  await cleanupTokens(deps, new Date());
  assert.equal(await families(), 2, 'nothing within the retention is deleted');
  assert.equal(await revocations(), 1, 'a revoked id stays while its token could still be presented');

  // Past the access token's expiry but within the retention: only the revoked id goes.
  await cleanupTokens(deps, new Date(Date.now() + 3600_000));
  assert.equal(await revocations(), 0);
  assert.equal(await families(), 2);

  // Past the retention of the ended family, but the live one is still within its own lifetimes
  // only if they were longer; both sessions end within 12 h, so both go after retention + 12 h.
  const after = new Date(Date.now() + retention + 60_000);
  const report = await cleanupTokens(deps, after);
  assert.equal(report.refresh_families, 1, 'only the revoked family has ended long enough ago');
  assert.equal(await families(), 1);
  assert.equal(await sessions(), 1);
  assert.equal(await count(h, 'select 1 from refresh_tokens where realm_id = $1', [realm.id]), 1);

  await cleanupTokens(deps, new Date(Date.now() + retention + 13 * 3600_000));
  assert.equal(await families(), 0);
  assert.equal(await sessions(), 0);
});
