// Entry outcomes of a federation transfer (spec doc 1, "Federation transfer"): the cases the
// integration tests do not reach through seeded links, one property each.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { analyseEntries, applicable, summarise } from './transfer-analysis.ts';

const link = (id: string, user: string, issuer: string, subject: string) => ({
  id,
  user_id: user,
  upstream_issuer: issuer,
  upstream_subject: subject,
});
const entry = (seq: number, from: string, to: string, more: Record<string, string> = {}) => ({
  seq,
  source_subject: from,
  target_subject: to,
  source_issuer: more.source_issuer ?? null,
  target_tenant: more.target_tenant ?? null,
});
const TENANTED = 'https://login.example.net/{tenant}/v2.0';

describe('identity-providers › transfer analysis', () => {
  test('case=one subject in two tenants of the source is ambiguous until source_issuer pins it', () => {
    const source = [link('l1', 'u1', 'https://a/t1', 'same'), link('l2', 'u2', 'https://a/t2', 'same')];
    const out = analyseEntries(
      { targetIssuer: 'https://b', targetTenant: null },
      [entry(1, 'same', 'x'), entry(2, 'same', 'y', { source_issuer: 'https://a/t2' })],
      source,
      [],
    );
    assert.deepEqual(
      out.map((a) => [a.outcome, a.linkId]),
      [
        ['ambiguous_source', null],
        ['ready', 'l2'],
      ],
    );
  });

  test("case=an entry's target_tenant wins over the transfer's; neither is target_tenant_required", () => {
    const source = [link('l1', 'u1', 'https://a', 's1'), link('l2', 'u2', 'https://a', 's2')];
    const withDefault = analyseEntries(
      { targetIssuer: TENANTED, targetTenant: 'main' },
      [entry(1, 's1', 's1'), entry(2, 's2', 's2', { target_tenant: 'other' })],
      source,
      [],
    );
    assert.deepEqual(
      withDefault.map((a) => a.targetIssuer),
      ['https://login.example.net/main/v2.0', 'https://login.example.net/other/v2.0'],
    );
    const without = analyseEntries(
      { targetIssuer: TENANTED, targetTenant: null },
      [entry(1, 's1', 's1')],
      source,
      [],
    );
    assert.equal(without[0]?.outcome, 'target_tenant_required');
    assert.equal(applicable(summarise(without.map((a) => a.outcome))), false);
  });

  test('case=matching is by issuer and subject only: a target identity in another tenant is no collision', () => {
    const out = analyseEntries(
      { targetIssuer: TENANTED, targetTenant: 't1' },
      [entry(1, 's1', 'n1')],
      [link('l1', 'u1', 'https://a', 's1')],
      [link('t9', 'u9', 'https://login.example.net/t2/v2.0', 'n1')],
    );
    assert.equal(out[0]?.outcome, 'ready');
  });
});
