// The configuration export (spec doc 1, Configuration document; Import semantics 9): it writes
// exactly what the import reads, so export -> validate -> import into an empty realm -> export
// gives the same document (the `realm` metadata aside), and it leaves out what rule 9 leaves out.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exportConfiguration } from '../../../src/configuration/config-export.ts';
import { JobRunner } from '../../../src/jobs/index.ts';
import { JOB_TYPES } from '../../../src/main/worker/tasks.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import type { RealmRow } from '../../../src/realms/realm.repo.ts';
import { apiCaller } from '../../harness/api-kit.ts';
import { ORDERS, sampleDocument } from '../../harness/config-kit.ts';
import { type Harness, startHarness } from '../../harness/harness.ts';
import { testCa } from '../../harness/mtls-certs.ts';

type Json = Record<string, unknown>;

const exportOf = (h: Harness, realm: RealmRow) =>
  exportConfiguration(h.ctx.db, { realm, publicOrigin: h.ctx.config.server.publicOrigin });

/** Two exports carry the same document; only their `realm` metadata differs. */
function assertSameApartFromRealm(actual: { realm: unknown }, expected: { realm: unknown }): void {
  const { realm: _a, ...restActual } = actual;
  const { realm: _b, ...restExpected } = expected;
  assert.equal(JSON.stringify(restActual), JSON.stringify(restExpected));
}

test('case=round trip across two realms gives the same document', async (t) => {
  const h = await startHarness(t);
  const source = await h.createRealm();
  const target = await h.createRealm();
  const a = await apiCaller(h, source);
  const b = await apiCaller(h, target);
  const doc = sampleDocument({
    client_resource_grants: {
      ...(sampleDocument().client_resource_grants as Json),
      billing: {
        [ORDERS]: {
          scopes: ['orders:read'],
          subject_types: ['service_principal'],
          exchange_policy: { accept_from_audiences: [ORDERS], max_scopes: ['orders:read'] },
        },
      },
    },
  });
  const imported = await a.call('POST', '/configuration/imports', doc);
  assert.equal(imported.status, 200, JSON.stringify(await imported.clone().json()));
  // Left out: a disabled client, and what the service defines itself.
  assert.equal(
    (await a.call('POST', '/clients', { client_id: 'old', name: 'Old', type: 'service' })).status,
    201,
  );
  assert.equal((await a.call('POST', '/clients/old/disable')).status, 200);

  const first = await exportOf(h, source);
  assert.equal(first.format, 'service.realm-config.v1');
  assert.deepEqual(first.realm, { name: source.name, display_name: source.display_name, policy_revision: 2 });
  assert.equal('expected_policy_revision' in first, false);
  assert.ok(first.excluded.includes('client_secrets'));
  assert.deepEqual(
    first.clients.map((c) => c.client_id),
    ['billing', 'shop-web'],
  );
  assert.deepEqual(
    first.resources.map((r) => r.audience),
    [ORDERS],
  );
  assert.deepEqual(
    first.roles.map((r) => r.name),
    ['refunder'],
  );
  assert.deepEqual(
    first.permissions.map((p) => p.name),
    ['orders.refund'],
  );
  assert.deepEqual(Object.keys(first.client_resource_grants), ['billing', 'shop-web']);
  assert.deepEqual(Object.keys(first.client_resource_grants['shop-web'] ?? {}), ['builtin:userinfo', ORDERS]);
  assert.equal(JSON.stringify(first).includes('secret"'), false);

  // The export is valid as it stands for its own realm: every object unchanged.
  // biome-ignore lint/suspicious/noExplicitAny: a plan body read in assertions only
  const same = (await (await a.call('POST', '/configuration/validate', first)).json()) as any;
  assert.deepEqual(same.errors, []);
  assert.equal(same.policy.action, 'unchanged');
  assert.deepEqual(same.clients.create, []);

  // Into the empty realm: the policy changes, so the document says which revision it expects.
  const forTarget = { ...first, expected_policy_revision: 0 };
  // biome-ignore lint/suspicious/noExplicitAny: a plan body read in assertions only
  const plan = (await (await b.call('POST', '/configuration/validate', forTarget)).json()) as any;
  assert.deepEqual(plan.errors, []);
  assert.deepEqual(plan.clients.create, ['billing', 'shop-web']);
  const res = await b.call('POST', '/configuration/imports', forTarget);
  assert.equal(res.status, 200, JSON.stringify(await res.clone().json()));

  const second = await exportOf(h, target);
  assertSameApartFromRealm(second, first);
});

test('case=POST /configuration/exports runs the config.export job; its file is the configuration document', async (t) => {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const admin = await apiCaller(h, realm);
  assert.equal((await admin.call('POST', '/configuration/imports', sampleDocument())).status, 200);

  const started = await admin.call('POST', '/configuration/exports', undefined, {
    'idempotency-key': 'export-1',
  });
  assert.equal(started.status, 202);
  const { job_id: jobId } = (await started.json()) as { job_id: string };
  assert.match(jobId, /^job_/);
  const again = await admin.call('POST', '/configuration/exports', undefined, {
    'idempotency-key': 'export-1',
  });
  assert.deepEqual(await again.json(), { job_id: jobId }, 'a repeated Idempotency-Key answers the same job');

  const runner = new JobRunner(workerDeps(h.ctx), JOB_TYPES, { holder: 'test-worker' });
  assert.equal(await runner.runNext(), 'succeeded');
  const job = (await (await admin.call('GET', `/jobs/${jobId}`)).json()) as Json;
  assert.equal(job.state, 'succeeded');
  assert.equal((job.result as Json).content_type, 'application/json');

  const grant = (await (await admin.call('POST', `/jobs/${jobId}/downloads`)).json()) as Json;
  const file = await admin.call('POST', '/job-downloads', { download_token: grant.download_token });
  assert.equal(file.status, 200);
  assert.equal(file.headers.get('content-disposition'), 'attachment; filename="export.json"');
  const downloaded = (await file.json()) as Json;
  assert.deepEqual(downloaded, JSON.parse(JSON.stringify(await exportOf(h, realm))));
  // What was exported is what validate accepts without errors.
  const plan = (await (await admin.call('POST', '/configuration/validate', downloaded)).json()) as Json;
  assert.deepEqual(plan.errors, []);
});

test('case=POST /configuration/exports needs realm.configuration.export', async (t) => {
  const h = await startHarness(t);
  const realm = await h.createRealm();
  const viewer = await apiCaller(h, realm, { roles: [] });
  const refused = await viewer.call('POST', '/configuration/exports');
  assert.equal(refused.status, 403);
  assert.equal(((await refused.json()) as Json).code, 'forbidden');
});

test('case=back-channel logout members and registered clients survive the round trip; registrations stay out', async (t) => {
  const h = await startHarness(t);
  const source = await h.createRealm();
  const target = await h.createRealm();
  const a = await apiCaller(h, source);
  const b = await apiCaller(h, target);
  const created = await a.call('POST', '/clients', {
    client_id: 'rp',
    name: 'RP',
    type: 'web',
    redirect_uris: ['https://rp.example.com/cb'],
    backchannel_logout_uri: 'https://rp.example.com/bcl?x=1',
    backchannel_logout_session_required: true,
  });
  assert.equal(created.status, 201, await created.clone().text());
  await h.setPolicy(source, { client_registration: { enabled: true, open: true } });
  const iat = (await (await a.call('POST', '/initial-access-tokens', {})).json()) as Json;
  const register = async (token: string | null, name: string) => {
    const res = await h.get(`/realms/${source.name}/oauth/register`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...(token ? { authorization: `Bearer ${token}` } : {}),
      },
      body: JSON.stringify({
        redirect_uris: ['https://partner.example.com/cb'],
        client_name: name,
        logo_uri: 'https://partner.example.com/logo.png',
        backchannel_logout_uri: 'https://partner.example.com/bcl',
      }),
    });
    const body = (await res.json()) as Json;
    assert.equal(res.status, 201, JSON.stringify(body));
    return String(body.client_id);
  };
  const approved = await register(String(iat.token), 'Partner');
  const held = await register(null, 'Held');

  const first = await exportOf(h, source);
  assert.ok(first.excluded.includes('client_registrations'));
  assert.deepEqual(
    first.clients.map((c) => c.client_id),
    [approved, 'rp'],
    'the held registration is disabled and stays out',
  );
  const [partner, rp] = first.clients as Json[];
  assert.equal(partner?.consent_mode, 'required', 'a registered client stays third-party');
  assert.equal(partner?.backchannel_logout_uri, 'https://partner.example.com/bcl');
  assert.equal('logo_uri' in (partner ?? {}), false, 'registration metadata is not a client member');
  assert.equal(rp?.backchannel_logout_uri, 'https://rp.example.com/bcl?x=1');
  assert.equal(rp?.backchannel_logout_session_required, true);
  assert.equal(JSON.stringify(first).includes(held), false);

  const forTarget = { ...first, expected_policy_revision: 0 };
  const res = await b.call('POST', '/configuration/imports', forTarget);
  assert.equal(res.status, 200, JSON.stringify(await res.clone().json()));
  const second = await exportOf(h, target);
  assertSameApartFromRealm(second, first);
  const registrations = await h.ctx.db.query('select 1 from client_registrations where realm_id = $1', [
    target.id,
  ]);
  assert.equal(registrations.rows.length, 0, 'the importing realm has an ordinary client');
  const [imported] = (
    await h.ctx.db.query(
      'select state, consent_mode, backchannel_logout_uri from clients where realm_id = $1 and client_id = $2',
      [target.id, approved],
    )
  ).rows;
  assert.deepEqual(imported, {
    state: 'active',
    consent_mode: 'required',
    backchannel_logout_uri: 'https://partner.example.com/bcl',
  });

  // A changed URI is a difference the create mode reports and the reconcile mode applies.
  const changed = {
    ...second,
    clients: (second.clients as Json[]).map((c) =>
      c.client_id === 'rp' ? { ...c, backchannel_logout_uri: 'https://rp.example.com/bcl2' } : c,
    ),
  };
  // biome-ignore lint/suspicious/noExplicitAny: a plan body read in assertions only
  const plan = (await (await b.call('POST', '/configuration/validate', changed)).json()) as any;
  assert.deepEqual(plan.errors, []);
  assert.deepEqual(plan.clients.differs, ['rp']);
  const reconciled = await b.call('POST', '/configuration/validate?mode=reconcile', changed);
  const reconcile = (await reconciled.json()) as { clients: { update: string[] } };
  assert.deepEqual(reconcile.clients.update, ['rp']);
  assert.equal((await b.call('POST', '/configuration/imports?mode=reconcile', changed)).status, 200);
  const third = await exportOf(h, target);
  assert.equal(
    (third.clients as Json[]).find((c) => c.client_id === 'rp')?.backchannel_logout_uri,
    'https://rp.example.com/bcl2',
  );
});

test('case=tls_client_auth members survive the round trip and a changed subject is applied', async (t) => {
  const h = await startHarness(t);
  const source = await h.createRealm();
  const target = await h.createRealm();
  const a = await apiCaller(h, source);
  const b = await apiCaller(h, target);
  const ca = await testCa('C=DE, O=Acme, CN=Acme CA');
  const created = await a.call('POST', '/clients', {
    client_id: 'billing',
    name: 'Billing',
    type: 'service',
    token_endpoint_auth_method: 'tls_client_auth',
    tls_client_auth_san_uri: 'spiffe://acme.example/billing',
    tls_client_auth_trust_anchors: [ca.certPem],
  });
  assert.equal(created.status, 201, await created.clone().text());
  const first = await exportOf(h, source);
  const [billing] = first.clients as Json[];
  assert.equal(billing?.tls_client_auth_san_uri, 'spiffe://acme.example/billing');
  assert.deepEqual(billing?.tls_client_auth_trust_anchors, [ca.certPem]);

  const res = await b.call('POST', '/configuration/imports', { ...first, expected_policy_revision: 0 });
  assert.equal(res.status, 200, JSON.stringify(await res.clone().json()));
  const second = await exportOf(h, target);
  assertSameApartFromRealm(second, first);

  const changed = {
    ...second,
    clients: (second.clients as Json[]).map(({ tls_client_auth_san_uri: _u, ...c }) => ({
      ...c,
      tls_client_auth_subject_dn: 'CN=billing,O=Acme,C=DE',
    })),
  };
  const applied = await b.call('POST', '/configuration/imports?mode=reconcile', changed);
  assert.equal(applied.status, 200, JSON.stringify(await applied.clone().json()));
  const [after] = (await exportOf(h, target)).clients as Json[];
  assert.equal(after?.tls_client_auth_subject_dn, 'CN=billing,O=Acme,C=DE');
  assert.equal('tls_client_auth_san_uri' in (after ?? {}), false);
});
