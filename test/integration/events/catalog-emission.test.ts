// The event catalog against what operations really write (spec doc 2, Events: Catalog;
// docs/events.md): a scripted run of administration operations, each under its own X-Request-Id,
// whose outbox rows must all be catalog types with catalog data members, obx_ ids, the request's
// correlation id and the catalog's org_id rule; worker runs correlate by run id; security.alert
// counts in service_security_signals_total.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { inChange } from '../../../src/audit/index.ts';
import { EVENT_CATALOG, type EventType, isEventType } from '../../../src/events/catalog.ts';
import { systemCall } from '../../../src/kernel/call.ts';
import { TASKS } from '../../../src/main/worker/tasks.ts';
import { startWorker } from '../../../src/main/worker/worker.ts';
import { findRoleByName } from '../../../src/roles/builtin-roles.repo.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { startHarness } from '../../harness/harness.ts';
import { rows } from '../../harness/signin-kit.ts';
import { sampleValue } from '../ops/prom-text.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read member by member
type Body = any;

describe('events › catalog emission', () => {
  test('case=a scripted run emits catalog events with their envelope rules', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    const admin = await apiCaller(h, realm);
    const expected: [string, EventType][] = [];
    let n = 0;
    /** One administration call under a request id of its own; `emits` is what it must write. */
    const call = async (
      method: string,
      path: string,
      body: unknown,
      status: number,
      emits: EventType[] = [],
    ) => {
      const requestId = `req-catalog-${++n}`;
      const res = await admin.call(method, path, body, { 'x-request-id': requestId });
      const text = await res.text();
      assert.ok(
        res.status >= 200 && res.status < 300 && res.status === status,
        `${method} ${path}: ${res.status} ${text}`,
      );
      for (const type of emits) expected.push([requestId, type]);
      return text ? (JSON.parse(text) as Body) : null;
    };

    const user: Body = await call(
      'POST',
      '/users',
      { email: 'ev@example.com', email_verified: true, password: 'a-long-enough-password' },
      201,
      ['user.created'],
    );
    await call('POST', `/users/${user.id}/suspend`, { reason: 'fraud review' }, 200, ['user.suspended']);
    await call('POST', `/users/${user.id}/reactivate`, { reason: 'cleared' }, 200, ['user.reactivated']);
    await call('POST', `/users/${user.id}/lock`, { reason: 'holiday' }, 200, ['user.locked']);
    await call('POST', `/users/${user.id}/reactivate`, { reason: 'back' }, 200, ['user.reactivated']);
    await call('POST', `/users/${user.id}/credentials/password/compromised`, {}, 204, [
      'security.credential_compromised',
    ]);

    const org: Body = await call(
      'POST',
      '/organizations',
      { slug: 'evented', display_name: 'Evented' },
      201,
      ['organization.created'],
    );
    const member: Body = await call('POST', `/organizations/${org.id}/members`, { user_id: user.id }, 201, [
      'organization.membership.added',
    ]);
    const mpath = `/organizations/${org.id}/members/${member.id}`;
    await call('POST', `${mpath}/suspend`, { reason: 'because' }, 200, ['organization.membership.suspended']);
    await call('POST', `${mpath}/reactivate`, { reason: 'because' }, 200, [
      'organization.membership.reactivated',
    ]);
    await call('DELETE', mpath, { reason: 'because' }, 200, ['organization.membership.removed']);
    const invitee: Body = await call(
      'POST',
      '/users',
      { email: 'inv@example.com', email_verified: true },
      201,
    );
    await call('POST', `/organizations/${org.id}/invitations`, { user_id: invitee.id }, 201, [
      'organization.invitation.created',
    ]);
    await call('POST', `/organizations/${org.id}/suspend`, { reason: 'billing' }, 200, [
      'organization.suspended',
    ]);
    await call('POST', `/organizations/${org.id}/reactivate`, { reason: 'paid' }, 200, [
      'organization.reactivated',
    ]);
    await call('POST', `/organizations/${org.id}/archive`, { reason: 'closed' }, 200, [
      'organization.archived',
    ]);
    const doomed: Body = await call(
      'POST',
      '/organizations',
      { slug: 'doomed', display_name: 'Doomed' },
      201,
    );
    await call('DELETE', `/organizations/${doomed.id}`, undefined, 202, ['organization.deleted']);

    const role = await h.ctx.db.tx((tx) => findRoleByName(tx, realm.id, 'realm-admin'));
    assert.ok(role);
    const assignment: Body = await call(
      'POST',
      '/role-assignments',
      { role_id: role.id, subject_type: 'user', subject_id: invitee.id, scope_type: 'realm' },
      201,
      ['authorization.role.assigned', 'security.alert'],
    );
    await call('DELETE', `/role-assignments/${assignment.id}`, undefined, 204, [
      'authorization.role.unassigned',
    ]);
    const hold: Body = await call('POST', '/audit-legal-holds', { reason: 'litigation' }, 201);
    await call('POST', `/audit-legal-holds/${hold.id}/release`, undefined, 200, ['security.alert']);
    await call('DELETE', `/users/${user.id}`, undefined, 204, ['user.deleted']);
    const absorbed: Body = await call(
      'POST',
      '/users',
      { email: 'old@example.com', email_verified: true },
      201,
      ['user.created'],
    );
    await call(
      'POST',
      `/users/${invitee.id}/merges`,
      { source_user_id: absorbed.id, reason: 'duplicate' },
      201,
      ['user.deleted', 'user.merged'],
    );

    // Background work: the scheduler's run id is the correlation id of what a task writes.
    const worker = startWorker(h.ctx, { autostart: false });
    t.after(() => worker.stop());
    let runCorrelation: string | null = null;
    await worker.scheduler.runOnce({
      name: 'test.catalog_run',
      intervalMs: 60_000,
      run: async (_deps, now) => {
        const c = systemCall(realm.id, now);
        runCorrelation = c.correlationId;
        await inChange(h.ctx.db, c, (_tx, record) =>
          record.event('user.created', { user_id: 'usr_run', created_via: 'import' }),
        );
        return {};
      },
    });
    assert.match(String(runCorrelation), /^run_[0-9a-z]{26}$/);
    expected.push([String(runCorrelation), 'user.created']);

    // The lifecycle rules (task lifecycle.users): a scheduled deactivation suspends under the run's
    // correlation id; scheduling it emits nothing of its own (document 2, Catalog).
    const leaving: Body = await call(
      'POST',
      '/users',
      { email: 'leaving@example.com', email_verified: true },
      201,
      ['user.created'],
    );
    const at = new Date(h.clock.now().getTime() + 1000).toISOString();
    await call('PUT', `/users/${leaving.id}/scheduled-deactivation`, { at, reason: 'contract ends' }, 200);
    h.clock.advance(2000);
    const lifecycle = TASKS.find((x) => x.name === 'lifecycle.users');
    assert.ok(lifecycle);
    assert.equal((await worker.scheduler.runOnce(lifecycle))?.suspended, 1);
    const [suspension] = await rows(
      h,
      `select correlation_id from outbox where realm_id = $1 and event_type = 'user.suspended'
          and data->>'user_id' = $2`,
      [realm.id, leaving.id],
    );
    assert.match(String(suspension?.correlation_id), /^run_[0-9a-z]{26}$/);

    const outbox = await rows(h, 'select * from outbox where realm_id = $1 order by id', [realm.id]);
    for (const e of outbox) {
      const type = e.event_type as string;
      assert.ok(isEventType(type), `${type} is in the catalog`);
      const entry = EVENT_CATALOG[type as EventType];
      assert.match(e.id as string, /^obx_[0-9a-z]{26}$/);
      const members = Object.keys(e.data as object);
      const allowed = new Set<string>(entry.data);
      assert.deepEqual(
        members.filter((m) => !allowed.has(m)),
        [],
        `${type} carries only catalog members`,
      );
      if (entry.orgId === 'always') assert.ok(e.org_id, `${type} names its organization`);
      if (entry.orgId === 'never') assert.equal(e.org_id, null, `${type} names no organization`);
    }
    for (const [correlation, type] of expected) {
      assert.ok(
        outbox.some((e) => e.correlation_id === correlation && e.event_type === type),
        `${type} written under ${correlation}`,
      );
    }
    const alert = outbox.find(
      (e) => e.event_type === 'security.alert' && (e.data as Body).signal === 'privileged_grant',
    );
    assert.ok(alert);

    const metrics = await (await h.internal('/metrics')).text();
    assert.ok(
      (sampleValue(metrics, 'service_security_signals_total', { signal: 'privileged_grant' }) ?? 0) >= 1,
    );
    assert.ok(
      (sampleValue(metrics, 'service_security_signals_total', { signal: 'configuration_change' }) ?? 0) >= 1,
    );
  });
});
