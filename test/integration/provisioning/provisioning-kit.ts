// Shared setup of the outbound provisioning tests: two realms of one server, the second one's own
// inbound SCIM 2.0 server (a real HTTP SCIM service provider, reached as `peer.test` through the
// fixed resolver table and the operator allowlist 127.0.0.1/32) as the remote end of the first
// one's provisioning target; the worker's push and the directory.sync job run on demand.
import assert from 'node:assert/strict';
import type { TestContext } from 'node:test';
import { JobRunner } from '../../../src/jobs/index.ts';
import { JOB_TYPES, type WorkerDeps } from '../../../src/main/worker/tasks.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import type { Resolver } from '../../../src/platform/net/outbound-http.ts';
import { pushDue } from '../../../src/provisioning/provisioning-push.task.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { type ApiCallerKit, apiCaller } from '../../harness/api-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { type Body, send } from '../roles/roles-kit.ts';

export const resolver: Resolver = async (host) => {
  const table: Record<string, string[]> = { 'peer.test': ['127.0.0.1'], 'private.test': ['10.1.2.3'] };
  const list = table[host];
  if (!list) throw Object.assign(new Error(`no such host ${host}`), { code: 'ENOTFOUND' });
  return list.map((address) => ({ address, family: 4 }));
};

export interface Side {
  realm: RealmRow;
  admin: ApiCallerKit;
  api(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; body: Body }>;
}

export async function side(h: Harness): Promise<Side> {
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  return { realm, admin, api: (m, p, b, hd) => send(admin, m, p, b, hd) };
}

/** A SCIM connector of `s` and a client of its SCIM server with the connector's token. */
export async function scimServer(h: Harness, s: Side) {
  const created = await s.api('POST', '/scim-connectors', { name: 'from another realm' });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const token = created.body.token as string;
  const port = new URL(h.publicUrl).port;
  const baseUrl = `http://peer.test:${port}/api/v1/realms/${s.realm.name}/scim/v2`;
  const scim = async (
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; body: Body }> => {
    const res = await h.get(`/api/v1/realms/${s.realm.name}/scim/v2${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept: 'application/scim+json',
        ...(body === undefined ? {} : { 'content-type': 'application/scim+json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : null };
  };
  return { token, baseUrl, scim };
}

export interface Setup {
  h: Harness;
  deps: WorkerDeps;
  source: Side;
  remote: Side;
  peer: Awaited<ReturnType<typeof scimServer>>;
  operations: string[];
}

export async function setup(t: TestContext): Promise<Setup> {
  const h = await startHarness(t, { resolver, overrides: { 'delivery.egress_allowlist': '127.0.0.1/32' } });
  const source = await side(h);
  const remote = await side(h);
  const peer = await scimServer(h, remote);
  const operations: string[] = [];
  const deps: WorkerDeps = {
    ...workerDeps(h.ctx),
    // The target is this same server: on a loaded test machine its answers may be slow.
    peerTimeoutMs: 60_000,
    provisioningPushed: (resource, operation, outcome) => {
      operations.push(`${resource} ${operation} ${outcome}`);
    },
  };
  return { h, deps, source, remote, peer, operations };
}

/** A target of `s` (the realm's, or under `prefix` an organization's) at the peer. */
export async function createTarget(s: Setup, body: Record<string, unknown> = {}, prefix = '') {
  const r = await s.source.api('POST', `${prefix}/provisioning-targets`, {
    name: 'realm two',
    base_url: s.peer.baseUrl,
    bearer_token: s.peer.token,
    allow_private_network: true,
    ...body,
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body;
}

/** Runs provisioning.push until the target's pass is complete; answers the operations it made. */
export async function pushPass(s: Setup, targetId: string): Promise<string[]> {
  const from = s.operations.length;
  await s.h.ctx.db.query('update provisioning_targets set push_due_at = $2 where id = $1', [
    targetId,
    s.h.clock.now(),
  ]);
  for (let i = 0; i < 20; i++) {
    await pushDue(s.deps, 'worker-a', s.h.clock.now());
    const row = await s.h.ctx.db.query<{
      push_cursor: string | null;
      push_failures: number;
      push_due_at: Date;
    }>('select push_cursor, push_failures, push_due_at from provisioning_targets where id = $1', [targetId]);
    const t = row.rows[0];
    if (!t) throw new Error('no such target');
    if (t.push_failures > 0 || (t.push_cursor === null && t.push_due_at > s.h.clock.now())) break;
  }
  return s.operations.slice(from);
}

/** Runs due jobs (the directory.sync the test queued among them). */
export const runJobs = (s: Setup) => new JobRunner(s.deps, JOB_TYPES, { holder: 'worker-a' }).runDue(5);

/** Every user of the SCIM server, by userName. */
export async function remoteUsers(s: Setup): Promise<Map<string, Body>> {
  const r = await s.peer.scim('GET', '/Users?count=200');
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return new Map((r.body.Resources as Body[]).map((u) => [u.userName, u]));
}

export async function remoteGroup(s: Setup, name: string): Promise<Body | undefined> {
  const r = await s.peer.scim('GET', `/Groups?filter=${encodeURIComponent(`displayName eq "${name}"`)}`);
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.Resources[0];
}
