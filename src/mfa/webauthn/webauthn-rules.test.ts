// The pure passkey policy rules (spec doc 1, Passkey policy 1, 2 and 5; WebAuthn L3 section 7.2
// step 6 for the user handle), table by table.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evaluateAttestationTrust } from './attestation-trust.ts';
import { userHandleMatches } from './authentication.ts';
import { unrequestedOutputs } from './extension-rules.ts';
import { parseNextUpdate } from './fido-blob.ts';
import { freshness } from './fido-metadata.ts';
import { aaguidAllowed, ZERO_AAGUID } from './webauthn-policy.ts';

const A = '11111111-2222-3333-4444-555555555555';
const B = '99999999-2222-3333-4444-555555555555';

test('allow and block lists, and the zero AAGUID', () => {
  const rows: [string[], string[], string, boolean][] = [
    [[], [], A, true],
    [[A], [], A, true],
    [[A], [], B, false],
    [[A], [], ZERO_AAGUID, false],
    [[A, ZERO_AAGUID], [], ZERO_AAGUID, true],
    [[], [A], A, false],
    [[], [A], B, true],
    [[], [A], ZERO_AAGUID, true],
  ];
  for (const [allowed, blocked, aaguid, expected] of rows)
    assert.equal(
      aaguidAllowed({ allowedAaguids: allowed, blockedAaguids: blocked }, aaguid),
      expected,
      `${allowed}/${blocked}/${aaguid}`,
    );
});

test('only requested extension outputs pass', () => {
  assert.deepEqual(unrequestedOutputs(['credProps'], { credProps: { rk: true } }, undefined), []);
  assert.deepEqual(unrequestedOutputs(['credProps'], {}, { credProtect: 2 }), ['credProtect']);
  assert.deepEqual(unrequestedOutputs(['credProps', 'credProtect'], {}, { credProtect: 2 }), []);
  assert.deepEqual(unrequestedOutputs([], { prf: {} }, {}), ['prf']);
});

test('the zero AAGUID and a missing chain are never trusted, whatever metadata says', async () => {
  const now = new Date();
  const realmRoots: string[] = [];
  assert.deepEqual(
    await evaluateAttestationTrust({
      aaguid: ZERO_AAGUID,
      x5c: [new Uint8Array(1)],
      realmRoots,
      operatorEntry: null,
      now,
    }),
    {
      trusted: false,
      source: null,
    },
  );
  assert.deepEqual(
    await evaluateAttestationTrust({ aaguid: A, x5c: [], realmRoots, operatorEntry: null, now }),
    {
      trusted: false,
      source: 'realm',
    },
  );
  assert.deepEqual(
    await evaluateAttestationTrust({ aaguid: A, x5c: [], realmRoots: null, operatorEntry: null, now }),
    { trusted: false, source: null },
  );
});

test('metadata freshness: current before nextUpdate, stale within the grace period, then expired', () => {
  const next = parseNextUpdate('2026-12-01');
  assert.equal(next.toISOString(), '2026-12-01T00:00:00.000Z');
  const at = (iso: string) => freshness(next, 2 * 86_400_000, new Date(iso));
  assert.equal(at('2026-11-30T23:59:59.999Z'), 'current');
  assert.equal(at('2026-12-01T00:00:00.000Z'), 'stale');
  assert.equal(at('2026-12-02T23:59:59.999Z'), 'stale');
  assert.equal(at('2026-12-03T00:00:00.000Z'), 'expired');
  assert.equal(freshness(next, 0, new Date('2026-12-01T00:00:00.000Z')), 'expired');
  for (const bad of [undefined, '2026-13-01', '2026-02-30', '2026-12-01T00:00:00Z', 20261201])
    assert.throws(() => parseNextUpdate(bad), /nextUpdate/, String(bad));
});

test('the user handle is the owner handle, and required when the assertion names the account', () => {
  const handle = (id: string) => ({ response: { userHandle: Buffer.from(id).toString('base64url') } });
  const rows: [unknown, boolean, boolean][] = [
    [handle('usr_alice'), false, true],
    [handle('usr_alice'), true, true],
    [handle('usr_bob'), false, false],
    [handle('usr_bob'), true, false],
    [{ response: {} }, true, true],
    [{ response: {} }, false, false],
    [{ response: { userHandle: null } }, false, false],
    [{ response: { userHandle: 42 } }, true, false],
  ];
  for (const [credential, identified, expected] of rows)
    assert.equal(
      userHandleMatches(credential, 'usr_alice', identified),
      expected,
      `${JSON.stringify(credential)} identified=${identified}`,
    );
});
