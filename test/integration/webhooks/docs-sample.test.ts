// The signature check shown in docs/webhooks.md ("Verifying signatures"), run as a reader would
// copy it: the code block is written to a module and imported, then fed real deliveries.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { deliver, dispatch, emit, type Json, json, setup, subscribe } from './webhook-kit.ts';

type Verify = (secret: string, headers: Record<string, string>, rawBody: string, nowSeconds?: number) => Json;

async function docsSample(): Promise<Verify> {
  const doc = readFileSync(join(import.meta.dirname, '..', '..', '..', 'docs', 'webhooks.md'), 'utf8');
  const m = /<!-- verify-sample -->\n```js\n([\s\S]*?)^```$/m.exec(doc);
  assert.ok(m?.[1], 'docs/webhooks.md shows the verification sample');
  const dir = mkdtempSync(join(tmpdir(), 'webhook-sample-'));
  const file = join(dir, 'verify.mjs');
  writeFileSync(file, m[1]);
  try {
    const mod = (await import(pathToFileURL(file).href)) as { verifyWebhook: Verify };
    return mod.verifyWebhook;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('webhooks › the documented verifier', () => {
  test('case=accepts real deliveries, during a rotation too, and refuses tampered ones', async (t) => {
    const verifyWebhook = await docsSample();
    const s = await setup(t);
    const sub = await subscribe(s);
    const eventId = await emit(s, 'user.created', { user_id: 'usr_doc', created_via: 'admin' });
    await dispatch(s);
    await deliver(s);
    const got = s.receiver.received[0]!;
    const headers = got.headers as Record<string, string>;
    const secret = String(sub.signing_secret);
    assert.equal(verifyWebhook(secret, headers, got.body).event_id, eventId);
    // A secret written without its padding verifies the same.
    assert.equal(verifyWebhook(secret.replace(/=+$/, ''), headers, got.body).event_id, eventId);
    assert.throws(
      () => verifyWebhook(secret, headers, got.body.replace('usr_doc', 'usr_dod')),
      /no valid signature/,
    );
    assert.throws(
      () => verifyWebhook(secret, { ...headers, 'webhook-id': 'obx_other' }, got.body),
      /no valid/,
    );
    const ts = Number(headers['webhook-timestamp']);
    assert.throws(() => verifyWebhook(secret, headers, got.body, ts + 301), /tolerance/);
    const other = await subscribe(s, { event_types: ['user.deleted'] });
    assert.throws(() => verifyWebhook(String(other.signing_secret), headers, got.body), /no valid/);

    const rotated = await json(await s.admin.call('POST', `/webhooks/${sub.id}/rotate-secret`));
    await emit(s, 'user.created', { user_id: 'usr_doc2', created_via: 'admin' });
    await dispatch(s);
    await deliver(s);
    const second = s.receiver.received.find((r) => r.body.includes('usr_doc2'))!;
    const h2 = second.headers as Record<string, string>;
    verifyWebhook(String(rotated.signing_secret), h2, second.body);
    verifyWebhook(secret, h2, second.body);
  });
});
