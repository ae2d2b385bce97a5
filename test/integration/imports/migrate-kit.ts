// Shared steps of the identity-cli migrate-from tests: the fixture exports, an operator logged in
// with identity-cli and the worker's part played by this process while the command polls, and
// signing a migrated user in through the headless sign-in API with their old password (and
// old authenticator app).
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { JobRunner } from '../../../src/jobs/index.ts';
import { JOB_TYPES, type WorkerDeps } from '../../../src/main/worker/tasks.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import { findRealmByName } from '../../../src/realms/index.ts';
import { loggedIn, type Operator } from '../../harness/cli-operator-kit.ts';
import type { HarnessOptions } from '../../harness/harness.ts';
import { passwordSignIn, REDIRECT, totpCode } from '../../harness/signin-kit.ts';

export const FIXTURES = join(import.meta.dirname, '..', '..', 'fixtures', 'migration');
export const fixture = (name: string) => join(FIXTURES, name);
export const VECTORS = JSON.parse(
  readFileSync(join(FIXTURES, '..', 'password-vectors', 'vectors.json'), 'utf8'),
) as Record<string, { password: string }>;
export const passwordOf = (vector: string): string => (VECTORS[vector] as { password: string }).password;

export const modeOf = (path: string): number => statSync(path).mode & 0o777;
export const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

/** An operator logged in with identity-cli, a web-app client, and a worker running due jobs. */
export async function migrationOperator(t: TestContext, harness: HarnessOptions = {}): Promise<Operator> {
  const op = await loggedIn(t, harness);
  const realm = await findRealmByName(op.h.ctx.db, op.realm);
  assert.ok(realm);
  await op.h.createClient(realm, {
    clientId: 'web-app',
    name: 'Web App',
    type: 'web',
    redirectUris: [REDIRECT],
  });
  const runner = new JobRunner<WorkerDeps>(workerDeps(op.h.ctx) as WorkerDeps, JOB_TYPES, {
    holder: 'migration-test-worker',
  });
  let stop = false;
  const working = (async () => {
    while (!stop) if ((await runner.runNext()) === null) await sleep(100);
  })();
  t.after(async () => {
    stop = true;
    await working;
  });
  return op;
}

/**
 * Signs the user in headlessly with the old password and, when given, a code of the old
 * authenticator's base32 secret; answers the final transaction status.
 */
export async function signIn(op: Operator, email: string, password: string, totpBase32?: string) {
  const { tx, state } = await passwordSignIn(op.h, op.realm, 'web-app', email, password);
  if (state.body.status !== 'pending' || !totpBase32) return state.body.status as string;
  const asked = (state.body.next_actions as { type: string }[]).some((a) => a.type === 'totp');
  assert.ok(asked, `${email}: the imported authenticator is asked for`);
  const done = await tx.step('totp', { code: totpCode(totpBase32, op.h.clock.now()) });
  return done.body.status as string;
}

/** Row count of a table in the operator's realm. */
export async function countIn(op: Operator, table: string): Promise<number> {
  const r = await op.h.ctx.db.query<{ n: number }>(
    `select count(*)::int as n from ${table} t join realms r on r.id = t.realm_id where r.name = $1`,
    [op.realm],
  );
  return Number(r.rows[0]?.n ?? 0);
}
