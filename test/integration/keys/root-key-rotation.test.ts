// Root-key and pepper rotation as docs/keys.md tells an operator to do it (spec doc 2, Key custody
// and rotation 2 and 3): add the new version everywhere, restart, switch the active version,
// restart, check with doctor; an old version can go only once nothing is sealed under it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { systemCall } from '../../../src/kernel/call.ts';
import { runKeyLifecycle } from '../../../src/keys/key-lifecycle.task.ts';
import { rotateSigningKey } from '../../../src/keys/signing-key-rotation.service.ts';
import { doctorReport } from '../../../src/main/cli/commands/keys.ts';
import { createContext } from '../../../src/main/context.ts';
import { workerDeps } from '../../../src/main/worker/worker.ts';
import { createLogger } from '../../../src/platform/log.ts';
import { startHarness, testConfig } from '../../harness/harness.ts';
import { oauthPost, seedGrant, seedResource, seedServiceClient } from '../../harness/token-kit.ts';
import { DAY, HOUR, keysOf } from './key-helpers.ts';

const newKey = () => randomBytes(32).toString('base64');

describe('keys › root key and pepper rotation', () => {
  test('case=add a version, restart, switch the active one, restart, doctor, drain the old one', async (t) => {
    const v1Only = await startHarness(t);
    const realm = await v1Only.createRealm();
    const db = v1Only.ctx.db;
    const v2 = newKey();
    const pepper1 = newKey();
    const pepper2 = newKey();

    // Step 1: version 2 added on every host, version 1 still active; pepper version 1 added.
    const added = await startHarness(t, {
      db,
      overrides: { 'keys.root.2': v2, 'keys.pepper.1': pepper1, 'keys.pepper_active_version': 1 },
    });
    const step1 = await doctorReport(added.ctx);
    assert.equal(step1.ok, true);
    assert.deepEqual(
      step1.root_keys.map((k) => [k.version, k.active]),
      [
        [1, true],
        [2, false],
      ],
    );
    assert.deepEqual(step1.signing_keys_by_root_version, { '1': 1 });

    // Step 2: version 2 active (pepper version 2 too), every host restarted.
    const switched = await startHarness(t, {
      db,
      overrides: {
        'keys.root.2': v2,
        'keys.active_version': 2,
        'keys.pepper.1': pepper1,
        'keys.pepper.2': pepper2,
        'keys.pepper_active_version': 2,
      },
    });
    const step2 = await doctorReport(switched.ctx);
    assert.equal(step2.ok, true);
    assert.deepEqual(
      step2.root_keys.map((k) => [k.version, k.active]),
      [
        [1, false],
        [2, true],
      ],
    );
    assert.deepEqual(
      step2.pepper_keys.map((k) => [k.version, k.active]),
      [
        [1, false],
        [2, true],
      ],
    );
    assert.notEqual(step2.root_keys[0]?.fingerprint, step2.root_keys[1]?.fingerprint);
    // The key sealed under version 1 still signs on a switched host.
    const svc = await seedServiceClient(switched, realm, 'billing');
    const api = await seedResource(switched, realm, { audience: 'https://api.example.com' });
    await seedGrant(switched, realm, svc.client, api, { scopes: [], subjectTypes: ['service_principal'] });
    const issued = await oauthPost(
      switched,
      realm,
      'token',
      { grant_type: 'client_credentials', resource: 'https://api.example.com' },
      svc.creds,
    );
    assert.equal(issued.status, 200, JSON.stringify(issued.body));

    // New data is sealed under version 2: a planned signing-key rotation drains version 1.
    const now = switched.clock.now();
    const deps = workerDeps(switched.ctx);
    await rotateSigningKey(deps, systemCall(realm.id, now), {
      mode: 'planned',
      reason: 'drain v1',
      algorithm: 'RS256',
    });
    const byVersion = (await keysOf(db, realm.id)).map((k) => [k.state, k.root_key_version]);
    assert.deepEqual(byVersion, [
      ['active', 1],
      ['pending', 2],
    ]);
    assert.deepEqual((await doctorReport(switched.ctx)).signing_keys_by_root_version, { '1': 1, '2': 1 });

    // A host given only version 2 would lose the version 1 key: doctor says so until it is retired.
    const config = testConfig({ 'keys.root.2': v2, 'keys.active_version': 2 });
    delete config.keys.root['1'];
    const withoutV1 = { ctx: await createContext(config, { db, env: {}, log: createLogger('silent') }) };
    t.after(() => withoutV1.ctx.outbound.close());
    assert.deepEqual(withoutV1.ctx.keyring?.versions(), [2]);
    const early = await doctorReport(withoutV1.ctx);
    assert.equal(early.ok, false);
    assert.deepEqual(early.missing_root_versions, [1]);

    const activation = new Date(now.getTime() + 48 * HOUR);
    await runKeyLifecycle(deps, activation);
    await runKeyLifecycle(deps, new Date(activation.getTime() + HOUR + 7 * DAY));
    const drained = await doctorReport(withoutV1.ctx);
    assert.equal(drained.ok, true, JSON.stringify(drained));
    assert.deepEqual(drained.signing_keys_by_root_version, { '2': 1 });
  });
});
