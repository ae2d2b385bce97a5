// Session and refresh-family lifetimes from the realm policy (docs/signin.md "Session lifetimes";
// docs/policy.md "sessions" and "tokens"), and a refresh counting as activity of the SSO session.
// Time moves on the harness's movable clock; nothing sleeps.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { test } from 'node:test';
import type { RealmRow } from '../../../src/realms/index.ts';
import type { Harness } from '../../harness/harness.ts';
import { startHeadless } from '../../harness/signin-driver.ts';
import {
  type MovableClock,
  movableClock,
  PASSWORD,
  REDIRECT,
  type Row,
  rows,
  signinSetup,
} from '../../harness/signin-kit.ts';
import { clientSecret, exchangeCode, oauthPost } from '../../harness/token-kit.ts';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

interface Setup {
  h: Harness;
  realm: RealmRow;
  clock: MovableClock;
  creds: { clientId: string; secret: string };
}

async function setup(t: TestContext, policy: Record<string, unknown> | null): Promise<Setup> {
  const s = await signinSetup(t, { clock: movableClock(), client: { allowRememberMe: true } });
  if (policy) await s.h.setPolicy(s.realm, policy);
  const secret = await clientSecret(s.h, s.realm, s.client);
  return { h: s.h, realm: s.realm, clock: s.clock, creds: { clientId: 'web-app', secret } };
}

/** A headless password sign-in (with the given session options) and its code exchanged for tokens. */
async function signIn(
  s: Setup,
  opts: { remember?: boolean; transient?: boolean; scope?: string } = {},
): Promise<{ session: Row; refreshToken: string | undefined }> {
  const tx = await startHeadless(s.h, s.realm.name, 'web-app', REDIRECT, { scope: opts.scope ?? 'openid' });
  if (opts.remember) assert.equal((await tx.step('remember-me', { remember: true })).status, 200);
  if (opts.transient) assert.equal((await tx.step('transient', { transient: true })).status, 200);
  assert.equal((await tx.step('identify', { identifier: 'alice@example.com' })).status, 200);
  const done = await tx.step('password', { password: PASSWORD });
  assert.equal(done.body.status, 'completed', JSON.stringify(done.body));
  const token = await exchangeCode(s.h, s.realm, s.creds, done.body.redirect_to, tx.verifier);
  assert.equal(token.status, 200, JSON.stringify(token.body));
  const [session] = await rows(
    s.h,
    `select s.* from authorization_codes c join sessions s on s.realm_id = c.realm_id and s.id = c.session_id
      where c.realm_id = $1 and c.transaction_id = $2`,
    [s.realm.id, tx.id],
  );
  assert.ok(session);
  return { session, refreshToken: token.body.refresh_token };
}

const refresh = (s: Setup, refreshToken: string) =>
  oauthPost(s.h, s.realm, 'token', { grant_type: 'refresh_token', refresh_token: refreshToken }, s.creds);

/** The session has ended at the clock's now, and its refresh token is refused. */
async function assertEnded(s: Setup, sessionId: string, refreshToken: string): Promise<void> {
  assert.equal(await isLive(s, sessionId), false);
  const late = await refresh(s, refreshToken);
  assert.equal(late.status, 400);
  assert.equal(late.body.error, 'invalid_grant');
}

async function sessionRow(s: Setup, id: string): Promise<Row> {
  const [row] = await rows(s.h, 'select * from sessions where realm_id = $1 and id = $2', [s.realm.id, id]);
  assert.ok(row);
  return row;
}

/** Whether the session is live at the clock's now (the rule of sessions/session-liveness.ts). */
async function isLive(s: Setup, id: string): Promise<boolean> {
  const row = await sessionRow(s, id);
  const now = s.clock.now().getTime();
  return (
    row.revoked_at === null &&
    new Date(row.idle_expires_at).getTime() > now &&
    new Date(row.absolute_expires_at).getTime() > now
  );
}

const msBetween = (a: unknown, b: unknown) =>
  new Date(a as string).getTime() - new Date(b as string).getTime();

test('a realm with a 5-minute idle timeout ends a session after 5 idle minutes', async (t) => {
  const s = await setup(t, { sessions: { idle_timeout_minutes: 5 } });
  const { session, refreshToken } = await signIn(s);
  assert.ok(refreshToken);
  assert.equal(session.idle_seconds, 300);
  assert.equal(msBetween(session.idle_expires_at, session.created_at), 5 * MINUTE);
  assert.equal(msBetween(session.absolute_expires_at, session.created_at), 12 * HOUR);

  s.clock.advance(4 * MINUTE);
  assert.equal(await isLive(s, session.id), true);
  s.clock.advance(2 * MINUTE);
  await assertEnded(s, session.id, refreshToken);
});

test('the absolute timeout ends a session however often it is refreshed, and a refresh never extends past it', async (t) => {
  const s = await setup(t, { sessions: { absolute_timeout_hours: 1 } });
  const { session, refreshToken } = await signIn(s);
  let token = refreshToken as string;
  for (const at of [20, 40]) {
    s.clock.advance(20 * MINUTE);
    const r = await refresh(s, token);
    assert.equal(r.status, 200, `refresh at ${at} min: ${JSON.stringify(r.body)}`);
    token = r.body.refresh_token;
  }
  // At 40 minutes the idle expiry would be 70 minutes; the absolute one (60) bounds it.
  const after = await sessionRow(s, session.id);
  assert.equal(msBetween(after.idle_expires_at, after.absolute_expires_at), 0);
  assert.equal(msBetween(after.absolute_expires_at, session.absolute_expires_at), 0);
  s.clock.advance(20 * MINUTE);
  await assertEnded(s, session.id, token);
});

test('a refresh every 20 minutes keeps a 30-minute-idle session alive for hours (a long CLI job)', async (t) => {
  const s = await setup(t, null);
  const { session, refreshToken } = await signIn(s);
  assert.equal(session.idle_seconds, 30 * 60);
  let token = refreshToken as string;
  for (let i = 1; i <= 6; i++) {
    s.clock.advance(20 * MINUTE);
    const r = await refresh(s, token);
    assert.equal(r.status, 200, `refresh ${i} at ${20 * i} min: ${JSON.stringify(r.body)}`);
    token = r.body.refresh_token;
    const row = await sessionRow(s, session.id);
    assert.equal(msBetween(row.idle_expires_at, s.clock.now()), 30 * MINUTE);
    assert.equal(msBetween(row.last_seen_at, s.clock.now()), 0);
  }
  assert.equal(await isLive(s, session.id), true, 'two hours in, past 30 minutes of the sign-in');
  // Without activity the idle timeout still applies.
  s.clock.advance(31 * MINUTE);
  await assertEnded(s, session.id, token);
});

test('remember-me lasts remember_me_days, idling up to 7 days within it; a policy change affects new sessions only', async (t) => {
  const s = await setup(t, { sessions: { remember_me_days: 2 } });
  const short = (await signIn(s, { remember: true })).session;
  assert.equal(short.remember_me, true);
  assert.equal(msBetween(short.absolute_expires_at, short.created_at), 2 * DAY);
  assert.equal(msBetween(short.idle_expires_at, short.created_at), 2 * DAY);

  await s.h.setPolicy(s.realm, { sessions: { remember_me_days: 10 } });
  const long = (await signIn(s, { remember: true })).session;
  assert.equal(msBetween(long.absolute_expires_at, long.created_at), 10 * DAY);
  assert.equal(msBetween(long.idle_expires_at, long.created_at), 7 * DAY);
  assert.equal(long.idle_seconds, 7 * 24 * 3600);
  // The session from before the change keeps its lengths.
  const before = await sessionRow(s, short.id);
  assert.equal(msBetween(before.absolute_expires_at, before.created_at), 2 * DAY);

  // Without remember-me the realm's ordinary lengths apply.
  const plain = (await signIn(s)).session;
  assert.equal(msBetween(plain.absolute_expires_at, plain.created_at), 12 * HOUR);
  assert.equal(msBetween(plain.idle_expires_at, plain.created_at), 30 * MINUTE);
});

test('refresh_token_idle_days and refresh_token_absolute_days set the lengths of new offline families', async (t) => {
  const s = await setup(t, null);
  const old = await signIn(s, { scope: 'openid offline_access' });
  await s.h.setPolicy(s.realm, { tokens: { refresh_token_idle_days: 2, refresh_token_absolute_days: 3 } });
  s.clock.advance(MINUTE); // the two families are told apart by their creation time
  const created = s.clock.now();
  const { refreshToken } = await signIn(s, { scope: 'openid offline_access' });
  assert.ok(refreshToken && old.refreshToken);
  const families = await rows(
    s.h,
    `select id, idle_seconds, idle_expires_at, absolute_expires_at, created_at from refresh_families
      where realm_id = $1 and offline order by created_at`,
    [s.realm.id],
  );
  assert.equal(families.length, 2);
  const [before, after] = families as [Row, Row];
  assert.equal(
    msBetween(before.absolute_expires_at, before.created_at),
    30 * DAY,
    'an older family keeps its lengths',
  );
  assert.equal(msBetween(before.idle_expires_at, before.created_at), 7 * DAY);
  assert.equal(after.idle_seconds, 2 * 24 * 3600);
  assert.equal(msBetween(after.idle_expires_at, created), 2 * DAY);
  assert.equal(msBetween(after.absolute_expires_at, created), 3 * DAY);

  // Used within its idle days it lives on (the session behind it ended long ago), up to its absolute end.
  s.clock.advance(1.5 * DAY);
  const r1 = await refresh(s, refreshToken);
  assert.equal(r1.status, 200, JSON.stringify(r1.body));
  const [moved] = await rows(
    s.h,
    'select idle_expires_at, absolute_expires_at from refresh_families where id = $1',
    [after.id],
  );
  assert.equal(
    msBetween(moved?.idle_expires_at, moved?.absolute_expires_at),
    0,
    'bounded by the absolute end',
  );
  s.clock.advance(1.5 * DAY);
  const r2 = await refresh(s, r1.body.refresh_token);
  assert.equal(r2.status, 400);
  assert.equal(r2.body.error, 'invalid_grant');
  // The older family (7 days idle) still refreshes three days in.
  assert.equal((await refresh(s, old.refreshToken)).status, 200);
});

test('a transient session lasts at most an hour whatever the policy says', async (t) => {
  const s = await setup(t, { sessions: { idle_timeout_minutes: 10080, absolute_timeout_hours: 720 } });
  const { session, refreshToken } = await signIn(s, { transient: true });
  assert.equal(session.transient, true);
  assert.equal(refreshToken, undefined, 'a transient session gets no refresh token');
  assert.equal(msBetween(session.absolute_expires_at, session.created_at), HOUR);
  assert.equal(msBetween(session.idle_expires_at, session.created_at), HOUR);
  s.clock.advance(HOUR);
  assert.equal(await isLive(s, session.id), false);
  // The same realm's ordinary session takes the policy's lengths.
  const plain = (await signIn(s)).session;
  assert.equal(msBetween(plain.absolute_expires_at, plain.created_at), 720 * HOUR);
  assert.equal(msBetween(plain.idle_expires_at, plain.created_at), 10080 * MINUTE);
});
