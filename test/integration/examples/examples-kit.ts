// What the tests of the README's examples share: a server whose public origin is its own listener
// (so audiences and the discovered issuer are reachable URLs), a realm with its first
// administrator bootstrapped as `npm start` does, and the examples run as child processes.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { bootstrapAdministrator } from '../../../src/setup/bootstrap.service.ts';
import { type Harness, startHarness, uniqueRealmName } from '../../harness/harness.ts';
import { testKeyMaterial } from '../../harness/key-pool.ts';
import { type RunResult, runToEnd } from '../../harness/run-to-end.ts';
import { childEnv } from '../cli/cli-process.ts';

export const ROOT = join(import.meta.dirname, '..', '..', '..');
export const ADMIN_EMAIL = 'admin@example.com';
export const ADMIN_PASSWORD = 'first-admin-password-1';

/** The commands of `tools` that this machine lacks (the tests that need them are skipped). */
export function missingTools(tools: string[]): string[] {
  return tools.filter((tool) => spawnSync('sh', ['-c', `command -v ${tool}`]).status !== 0);
}

export interface ExampleServer {
  h: Harness;
  realm: string;
  /** server.public_origin, the listener's own URL. */
  origin: string;
  issuer: string;
}

/** A server and a realm whose first administrator has ADMIN_EMAIL and ADMIN_PASSWORD. */
export async function exampleServer(t: TestContext): Promise<ExampleServer> {
  const h = await startHarness(t, { publicOriginIsListener: true });
  const realm = uniqueRealmName();
  if (!h.ctx.keyring) throw new Error('the harness has no keyring');
  await bootstrapAdministrator(
    {
      ...h.ctx,
      keyring: h.ctx.keyring,
      signingAlgorithm: h.ctx.config.keys.signingAlgorithm,
      newKeyMaterial: testKeyMaterial,
    },
    { realm, email: ADMIN_EMAIL, password: ADMIN_PASSWORD },
  );
  const origin = h.ctx.config.server.publicOrigin;
  return { h, realm, origin, issuer: `${origin}/realms/${realm}` };
}

/** Runs a program from the repository root with only the given settings added to the environment. */
export function runExample(
  command: string,
  args: string[],
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<RunResult> {
  return runToEnd(command, args, { cwd: ROOT, env: childEnv(env), timeoutMs });
}
