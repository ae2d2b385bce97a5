// The certificate path rules (cert-path.ts), one chain per rule, built with the test CA kit.
// @peculiar/x509 needs the Reflect polyfill loaded before it.
import 'reflect-metadata';
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { KeyUsageFlags } from '@peculiar/x509';
import {
  makeAttestationLeaf,
  makeIntermediate,
  makeRoot,
  type TestCa,
} from '../../../test/harness/attestation-ca.ts';
import { type PathInput, type PathVerdict, validatePath } from './cert-path.ts';

const MODEL = '11111111-2222-3333-4444-555555555555';
const YEAR = 365 * 86_400_000;

async function check(
  leaf: TestCa,
  chain: TestCa[],
  anchors: TestCa[],
  opts: Partial<PathInput> = {},
): Promise<PathVerdict> {
  return validatePath({
    leaf: leaf.der,
    intermediates: chain.map((c) => c.der),
    anchors: anchors.map((a) => a.pem),
    now: new Date(),
    leafMustNotBeCa: true,
    ...opts,
  });
}

const refused = (problem: string) => ({ ok: false, problem });

describe('certificate paths', () => {
  test('case=a leaf under the root, and under an intermediate, is valid', async () => {
    const root = await makeRoot();
    const intermediate = await makeIntermediate(root);
    assert.deepEqual(await check(await makeAttestationLeaf(root, MODEL), [], [root]), { ok: true });
    assert.deepEqual(await check(await makeAttestationLeaf(intermediate, MODEL), [intermediate], [root]), {
      ok: true,
    });
  });

  test('case=an issuer without keyCertSign in keyUsage is refused, the anchor too', async () => {
    const root = await makeRoot();
    const signOnly = await makeIntermediate(root, 'Sign only', { keyUsage: KeyUsageFlags.digitalSignature });
    assert.deepEqual(
      await check(await makeAttestationLeaf(signOnly, MODEL), [signOnly], [root]),
      refused('issuer_cannot_sign_certificates'),
    );
    const noUsage = await makeIntermediate(root, 'No key usage', { keyUsage: null });
    assert.deepEqual(
      await check(await makeAttestationLeaf(noUsage, MODEL), [noUsage], [root]),
      refused('issuer_cannot_sign_certificates'),
    );
    const anchor = await makeRoot('Anchor without keyCertSign', { keyUsage: KeyUsageFlags.cRLSign });
    assert.deepEqual(
      await check(await makeAttestationLeaf(anchor, MODEL), [], [anchor]),
      refused('issuer_cannot_sign_certificates'),
    );
  });

  test('case=an intermediate with cA false is refused', async () => {
    const root = await makeRoot();
    const notCa = await makeIntermediate(root, 'Not a CA', { ca: false });
    assert.deepEqual(
      await check(await makeAttestationLeaf(notCa, MODEL), [notCa], [root]),
      refused('issuer_not_ca'),
    );
  });

  test('case=pathLenConstraint is respected at the anchor and at intermediates', async () => {
    const zero = await makeRoot('Root pathLen 0', { pathLen: 0 });
    const under = await makeIntermediate(zero);
    assert.deepEqual(await check(await makeAttestationLeaf(zero, MODEL), [], [zero]), { ok: true });
    assert.deepEqual(
      await check(await makeAttestationLeaf(under, MODEL), [under], [zero]),
      refused('path_length_exceeded'),
    );
    const one = await makeRoot('Root pathLen 1', { pathLen: 1 });
    const first = await makeIntermediate(one, 'First', { pathLen: 0 });
    assert.deepEqual(await check(await makeAttestationLeaf(first, MODEL), [first], [one]), { ok: true });
    const second = await makeIntermediate(first, 'Second');
    assert.deepEqual(
      await check(await makeAttestationLeaf(second, MODEL), [second, first], [one]),
      refused('path_length_exceeded'),
    );
  });

  test('case=an expired intermediate, leaf or anchor is refused; validity is judged at the given time', async () => {
    const root = await makeRoot();
    const expired = await makeIntermediate(root, 'Expired', { expired: true });
    assert.deepEqual(
      await check(await makeAttestationLeaf(expired, MODEL), [expired], [root]),
      refused('outside_validity'),
    );
    assert.deepEqual(
      await check(await makeAttestationLeaf(root, MODEL, { expired: true }), [], [root]),
      refused('outside_validity'),
    );
    const old = await makeRoot('Expired root', { expired: true });
    assert.deepEqual(
      await check(await makeAttestationLeaf(old, MODEL), [], [old]),
      refused('outside_validity'),
    );
    const leaf = await makeAttestationLeaf(root, MODEL);
    assert.deepEqual(
      await check(leaf, [], [root], { now: new Date(Date.now() + 20 * YEAR) }),
      refused('outside_validity'),
    );
  });

  test('case=an attestation leaf with cA true is refused; a BLOB signer may be a CA', async () => {
    const root = await makeRoot();
    const caLeaf = await makeAttestationLeaf(root, MODEL, { ca: true });
    assert.deepEqual(await check(caLeaf, [], [root]), refused('leaf_is_ca'));
    assert.deepEqual(await check(caLeaf, [], [root], { leafMustNotBeCa: false }), { ok: true });
  });

  test('case=a chain to an unrelated root, or a root presented as its own leaf, has no path', async () => {
    const root = await makeRoot();
    const other = await makeRoot('Unrelated');
    assert.deepEqual(await check(await makeAttestationLeaf(root, MODEL), [], [other]), refused('no_path'));
    assert.deepEqual(await check(root, [], [root], { leafMustNotBeCa: false }), refused('no_path'));
    const intermediate = await makeIntermediate(root);
    assert.deepEqual(
      await check(await makeAttestationLeaf(intermediate, MODEL), [], [root]),
      refused('no_path'),
      'the intermediate was not sent',
    );
  });

  test('case=an unknown critical extension and unparsable input are refused', async () => {
    const root = await makeRoot();
    const leaf = await makeAttestationLeaf(root, MODEL, { criticalExtension: '1.3.6.1.4.1.99999.1' });
    assert.deepEqual(await check(leaf, [], [root]), refused('unknown_critical_extension'));
    assert.deepEqual(
      await validatePath({
        leaf: new Uint8Array([1, 2, 3]),
        intermediates: [],
        anchors: [root.pem],
        now: new Date(),
        leafMustNotBeCa: true,
      }),
      refused('unparsable'),
    );
  });
});
