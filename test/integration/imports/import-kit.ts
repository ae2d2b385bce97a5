// Shared steps of the user import tests: documents in format service.user-import.v1, posting them
// as an administrator, running the worker's job types once, and reading what an import left.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { TestContext } from 'node:test';
import type { ApiCallerKit } from '../../harness/api-kit.ts';
import { REDIRECT, rows } from '../../harness/signin-kit.ts';
import { runJobs } from '../exports/exports-kit.ts';
import { type Body, type OrgSetup, setup } from '../organizations/org-test-kit.ts';

export type Vector = {
  password: string;
  hash?: string;
  salt?: string;
  credential_data?: string;
  secret_data?: string;
  parameters?: { signer_key: string; salt_separator: string; rounds: number; memory_cost: number };
};

export const VECTORS = JSON.parse(
  readFileSync(new URL('../../fixtures/password-vectors/vectors.json', import.meta.url), 'utf8'),
) as Record<string, Vector>;

export const SOURCE = 'keycloak-test';

/** An import setup: a realm administrator and the 'web-app' client imported users sign in to. */
export async function importSetup(
  t: TestContext,
  overrides: Record<string, unknown> = {},
): Promise<OrgSetup> {
  const s = await setup(t, overrides);
  await s.h.createClient(s.realm, {
    clientId: 'web-app',
    name: 'Web App',
    type: 'web',
    redirectUris: [REDIRECT],
  });
  return s;
}

let serial = 0;
/** A minimal record with a unique source id and email. */
export function userRecord(extra: Record<string, unknown> = {}): Record<string, unknown> {
  serial += 1;
  const id = `${Date.now().toString(36)}-${serial}`;
  return {
    source_id: `kc-${id}`,
    identifiers: [{ type: 'email', value: `imported-${id}@example.com`, verified: true }],
    display_name: `Imported ${serial}`,
    ...extra,
  };
}

export const emailOfRecord = (r: Record<string, unknown>) =>
  (r.identifiers as { type: string; value: string }[]).find((i) => i.type === 'email')?.value as string;

export function importDoc(users: unknown[], extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { format: 'service.user-import.v1', source_system: SOURCE, users, ...extra };
}

export async function postImport(
  caller: ApiCallerKit,
  doc: unknown,
  opts: { dryRun?: boolean; key?: string } = {},
): Promise<Response> {
  return caller.call(
    'POST',
    `/user-imports${opts.dryRun ? '?dry_run=true' : ''}`,
    doc,
    opts.key ? { 'idempotency-key': opts.key } : {},
  );
}

/** Posts, expects 202, runs the worker's jobs; answers the job id and the import report. */
export async function importNow(s: OrgSetup, doc: unknown, caller: ApiCallerKit = s.admin) {
  const res = await postImport(caller, doc);
  assert.equal(res.status, 202, await res.clone().text());
  const { job_id } = (await res.json()) as { job_id: string };
  const ends = await runJobs(s);
  const job = (await (await caller.call('GET', `/jobs/${job_id}`)).json()) as Body;
  const report = (await (await caller.call('GET', `/user-imports/${job_id}`)).json()) as Body;
  return { jobId: job_id, ends, job, report };
}

export const userIdOf = async (s: OrgSetup, email: string): Promise<string | undefined> =>
  (
    await rows(
      s.h,
      `select user_id from user_identifiers where realm_id = $1 and type = 'email' and value_key = lower($2)`,
      [s.realm.id, email],
    )
  )[0]?.user_id;

export const storedHash = async (s: OrgSetup, userId: string): Promise<string | undefined> =>
  (
    await rows(s.h, 'select hash from password_credentials where realm_id = $1 and user_id = $2', [
      s.realm.id,
      userId,
    ])
  )[0]?.hash;

/** Row counts of the tables an import writes, to show that something wrote nothing. */
export async function footprint(s: OrgSetup): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const table of [
    'users',
    'user_identifiers',
    'user_external_ids',
    'password_credentials',
    'totp_credentials',
    'memberships',
    'role_assignments',
    'imported_audit_events',
    'audit_events',
    'outbox',
    'jobs',
    'user_imports',
  ]) {
    const [r] = await rows(s.h, `select count(*)::int as n from ${table} where realm_id = $1`, [s.realm.id]);
    out[table] = Number(r?.n ?? 0);
  }
  return out;
}
