// The verifier package (packages/verifier) against a running server, in its three modes (document 2,
// Revocation exposure): offline checks, strict-online introspection, and bounded-state replay of the
// session-event stream, which sees a revocation after its next sync and fails closed past its
// staleness bound while the stream is out.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  BoundedStateVerifier,
  introspectionVerifier,
  offlineVerifier,
  VerificationError,
} from '../../../packages/verifier/src/index.ts';
import { TcpFaultProxy } from '../../harness/tcp-fault-proxy.ts';
import { AUDIENCE, verifierKit } from './verifier-kit.ts';

const code = (c: string) => (e: unknown) => e instanceof VerificationError && e.code === c;

/** Resolves on the first call for which `ready` holds. */
function signal<A>(ready: (a: A) => boolean) {
  let fire: () => void = () => {};
  const reached = new Promise<void>((r) => {
    fire = r;
  });
  return { reached, hook: (a: A) => (ready(a) ? fire() : undefined) };
}

describe('verifier › modes against a running server', () => {
  test('case=offline mode checks issuer, audience, type and signature', async (t) => {
    const k = await verifierKit(t);
    const { token, userId } = await k.subject();
    const v = offlineVerifier({ issuer: k.issuer, audience: AUDIENCE });
    assert.equal((await v.verify(token)).claims.sub, userId);
    const otherAudience = offlineVerifier({ issuer: k.issuer, audience: 'https://else.example.test' });
    await assert.rejects(otherAudience.verify(token), code('invalid_token'));
    const otherIssuer = offlineVerifier({
      issuer: `${k.issuer}x`,
      audience: AUDIENCE,
      jwksUri: `${k.issuer}/jwks`,
    });
    await assert.rejects(otherIssuer.verify(token), code('invalid_token'));
    const [h = '', p = ''] = token.split('.');
    await assert.rejects(v.verify(`${h}.${p}.AAAA`), code('invalid_token'));
    // Past expiry plus the clock tolerance.
    const late = offlineVerifier({ issuer: k.issuer, audience: AUDIENCE, now: () => Date.now() + 400_000 });
    await assert.rejects(late.verify(token), code('invalid_token'));
  });

  test('case=introspection mode sees a revocation at once and denies when it cannot ask', async (t) => {
    const k = await verifierKit(t);
    const { token, userId } = await k.subject();
    const v = introspectionVerifier({
      issuer: k.issuer,
      audience: AUDIENCE,
      clientId: k.introspector.clientId,
      clientSecret: k.introspector.secret,
    });
    assert.equal((await v.verify(token)).claims.sub, userId);
    await k.revokeSessions(userId);
    await assert.rejects(v.verify(token), code('invalid_token'));
    const unreachable = introspectionVerifier({
      issuer: k.issuer,
      audience: AUDIENCE,
      clientId: k.introspector.clientId,
      clientSecret: k.introspector.secret,
      introspectionUri: 'http://127.0.0.1:9/introspect',
    });
    await assert.rejects(
      unreachable.verify(token),
      (e) => code('unavailable')(e) && (e as VerificationError).status === 503,
    );
  });

  test('case=bounded-state mode sees a revocation after its next sync', async (t) => {
    const k = await verifierKit(t);
    const { token, userId } = await k.subject();
    const other = await k.subject();
    const applied = signal((n: number) => n > 0);
    const v = new BoundedStateVerifier({
      issuer: k.issuer,
      audience: AUDIENCE,
      streamClientId: k.reader.clientId,
      streamClientSecret: k.reader.secret,
      onSync: applied.hook,
    });
    t.after(() => v.stop());
    await v.start();
    assert.ok(v.isFresh());
    assert.equal((await v.verify(token)).claims.sub, userId);
    await k.revokeSessions(userId);
    await applied.reached;
    await assert.rejects(v.verify(token), code('invalid_token'));
    assert.equal((await v.verify(other.token)).claims.sub, other.userId, 'other users are untouched');
  });

  test('case=a compromised key: bounded-state refuses its tokens, offline fetches the new key', async (t) => {
    const k = await verifierKit(t);
    const old = await k.subject();
    const offline = offlineVerifier({ issuer: k.issuer, audience: AUDIENCE, jwksCooldownMs: 0 });
    assert.ok(await offline.verify(old.token));
    const applied = signal((n: number) => n > 0);
    const bounded = new BoundedStateVerifier({
      issuer: k.issuer,
      audience: AUDIENCE,
      streamClientId: k.reader.clientId,
      streamClientSecret: k.reader.secret,
      onSync: applied.hook,
    });
    t.after(() => bounded.stop());
    await bounded.start();
    assert.ok(await bounded.verify(old.token));
    const rotated = await k.admin.call('POST', '/signing-key-rotations', {
      mode: 'emergency',
      reason: 'leaked',
    });
    assert.equal(rotated.status, 201);
    await applied.reached;
    await assert.rejects(bounded.verify(old.token), code('invalid_token'));
    // A token of the new key names a kid the offline verifier has not seen: it fetches the set again.
    const fresh = await k.subject();
    assert.equal((await offline.verify(fresh.token)).claims.sub, fresh.userId);
    assert.equal((await bounded.verify(fresh.token)).claims.sub, fresh.userId);
  });

  test('case=bounded-state mode fails closed once the stream has been out past the bound', async (t) => {
    const k = await verifierKit(t);
    const { token } = await k.subject();
    const origin = new URL(k.issuer);
    const proxy = await TcpFaultProxy.start({ host: '127.0.0.1', port: Number(origin.port) });
    t.after(() => proxy.close());
    let clock = Date.now();
    const failed = signal((_e: Error) => true);
    const synced = signal((_n: number) => true);
    const v = new BoundedStateVerifier({
      issuer: k.issuer,
      audience: AUDIENCE,
      streamClientId: k.reader.clientId,
      streamClientSecret: k.reader.secret,
      streamUri: `http://127.0.0.1:${proxy.port}/api/v1/realms/${k.realm.name}/session-events`,
      stalenessBoundMs: 30_000,
      waitSeconds: 5,
      now: () => clock,
      onSyncError: failed.hook,
    });
    t.after(() => v.stop());
    await v.start();
    assert.ok(await v.verify(token));
    await proxy.refuse();
    await failed.reached;
    // Within the bound the last sync still counts; past it, every verification is refused.
    assert.ok(await v.verify(token));
    clock += 31_000;
    await assert.rejects(
      v.verify(token),
      (e) => code('stale_state')(e) && (e as VerificationError).status === 503,
    );
    // The stream back, the first read to its end makes the state fresh again.
    const back = new BoundedStateVerifier({
      issuer: k.issuer,
      audience: AUDIENCE,
      streamClientId: k.reader.clientId,
      streamClientSecret: k.reader.secret,
      streamUri: `http://127.0.0.1:${proxy.port}/api/v1/realms/${k.realm.name}/session-events`,
      now: () => clock,
      onSync: synced.hook,
    });
    t.after(() => back.stop());
    await proxy.resume();
    await back.start();
    await synced.reached;
    assert.ok(await back.verify(token));
  });
});
