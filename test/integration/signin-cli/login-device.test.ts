// identity-cli login --device as an operator runs it from a second terminal: the child prints the
// verification address and the user code and polls; the administrator signs in "on another
// device" through the transaction API with intent device (password and TOTP); the child then
// stores the admin token the way login does, and `identity-cli api` works with it.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { decodeBase32 } from '../../../src/mfa/base32.ts';
import { totpAt, totpStep } from '../../../src/mfa/otp.ts';
import { bootstrapAdministrator } from '../../../src/setup/bootstrap.service.ts';
import { EMAIL, login, PASSWORD, tempDir } from '../../harness/cli-operator-kit.ts';
import { nodeArgs } from '../../harness/entry-point.ts';
import { startHarness, uniqueRealmName } from '../../harness/harness.ts';
import { json } from '../../harness/signin-driver.ts';
import { childEnv, run } from '../cli/cli-process.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

test('case=login --device signs an administrator in from another device/mode=headless', {
  timeout: 120_000,
}, async (t) => {
  const h = await startHarness(t, { overrides: { 'ui.enabled': true } });
  const realm = uniqueRealmName();
  await bootstrapAdministrator(
    { ...h.ctx, keyring: h.ctx.keyring as NonNullable<typeof h.ctx.keyring>, signingAlgorithm: 'RS256' },
    { realm, email: EMAIL, password: PASSWORD },
  );
  // A first login enrolls TOTP (the administrator needs MFA); its key signs the device sign-in.
  const first = tempDir(t);
  const enrolled = await login(childEnv({ XDG_CONFIG_HOME: first, HOME: first }), [
    '-realm',
    realm,
    '-email',
    EMAIL,
    '-server',
    h.publicUrl,
  ]);
  assert.equal(enrolled.code, 0, enrolled.stderr);
  const key = /key: ([A-Z2-7]+)/.exec(enrolled.stderr)?.[1] as string;

  const config = tempDir(t);
  const env = childEnv({ XDG_CONFIG_HOME: config, HOME: config });
  const child = spawn(
    process.execPath,
    [...nodeArgs('src/main/identity-cli.ts'), 'login', '--realm', realm, '--device', '--server', h.publicUrl],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => {
    stdout += d;
  });
  const shown = new Promise<string>((resolve) => {
    child.stderr.on('data', (d) => {
      stderr += d;
      const code = /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(stderr)?.[1];
      if (code) resolve(code);
    });
  });
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  t.after(() => child.kill());
  const userCode = await shown;
  assert.match(
    stderr,
    new RegExp(`open ${h.ctx.config.server.publicOrigin}/ui/login/\\?realm=${realm}&mode=device`),
  );

  // The other device: the login UI's device page, through the transaction API.
  const base = `/api/v1/realms/${realm}/auth/transactions`;
  const start = await json(
    await h.get(base, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_id: 'account', intent: 'device', device_user_code: userCode }),
    }),
  );
  assert.equal(start.status, 201, JSON.stringify(start.body));
  assert.equal(start.body.state.client.client_id, 'identity-cli');
  const step = async (path: string, body: unknown) =>
    json(
      await h.get(`${base}/${start.body.transaction_id}/${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-transaction-token': start.body.continuation_token },
        body: JSON.stringify(body),
      }),
    );
  const afterPassword = await step('password', { identifier: EMAIL, password: PASSWORD });
  assert.equal(afterPassword.status, 200, JSON.stringify(afterPassword.body));
  const code = totpAt(decodeBase32(key), totpStep(Date.now()) + 1);
  const done = await step('totp', { code });
  assert.equal(done.body.status, 'completed', JSON.stringify(done.body));

  assert.equal(await closed, 0, stderr);
  assert.match(stderr, new RegExp(`Logged in to realm ${realm}`));
  const file = join(config, 'proudauth', 'credentials.json');
  const stored = JSON.parse(readFileSync(file, 'utf8'));
  const entry = stored.credentials[`${h.ctx.config.server.publicOrigin}/realms/${realm}`];
  assert.ok(entry.access_token);
  assert.ok(!stdout.includes(entry.access_token) && !stderr.includes(entry.access_token));
  const users = await run('identity-cli', ['api', 'GET', '/users'], { env });
  assert.equal(users.code, 0, users.stderr);
  assert.ok(JSON.parse(users.stdout).items.some((u: { id: string }) => u.id === entry.user.id));
});
