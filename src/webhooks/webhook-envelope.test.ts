// Envelope versions 1 and 2 and the payload forms (spec doc 2, Event envelope; Payload forms 1;
// Versioning 1).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EVENT_CATALOG } from '../events/catalog.ts';
import { dataInForm, type EnvelopeEvent, renderEnvelope } from './webhook-envelope.ts';

const event: EnvelopeEvent = {
  id: 'obx_01hzy5g2k9m3n4p5q6r7s8t9v0',
  type: 'organization.membership.added',
  occurredAt: new Date('2026-11-26T10:00:00.000Z'),
  realmId: 'rlm_01hzy5g2k9m3n4p5q6r7s8t9v1',
  orgId: 'org_01hzy5g2k9m3n4p5q6r7s8t9v2',
  correlationId: 'req-42',
  data: { user_id: 'usr_1', membership_id: 'mem_1', source: 'invitation' },
};

describe('webhook envelope', () => {
  test('version 1, minimal: org_id, no payload form, data without standard-only members', () => {
    assert.deepEqual(JSON.parse(renderEnvelope(event, 1, 'minimal')), {
      event_id: event.id,
      event_type: 'organization.membership.added',
      event_version: 1,
      occurred_at: '2026-11-26T10:00:00.000Z',
      realm_id: event.realmId,
      org_id: event.orgId,
      correlation_id: 'req-42',
      data: { user_id: 'usr_1', membership_id: 'mem_1' },
    });
  });

  test('version 2, standard: organization_id and the payload form stated', () => {
    assert.deepEqual(JSON.parse(renderEnvelope(event, 2, 'standard')), {
      event_id: event.id,
      event_type: 'organization.membership.added',
      event_version: 2,
      occurred_at: '2026-11-26T10:00:00.000Z',
      realm_id: event.realmId,
      organization_id: event.orgId,
      correlation_id: 'req-42',
      payload_form: 'standard',
      data: { user_id: 'usr_1', membership_id: 'mem_1', source: 'invitation' },
    });
  });

  test('absent organization and correlation leave their members out', () => {
    const e = { ...event, orgId: null, correlationId: null };
    for (const v of [1, 2] as const) {
      const body = JSON.parse(renderEnvelope(e, v, 'minimal')) as Record<string, unknown>;
      assert.equal('org_id' in body || 'organization_id' in body || 'correlation_id' in body, false);
    }
  });

  test('minimal keeps *_id and the named members only', () => {
    assert.deepEqual(
      dataInForm(
        'user.suspended',
        { user_id: 'u', state: 'suspended', reason: 'x', created_via: 'admin', authorization_revision: 3 },
        'minimal',
      ),
      { user_id: 'u', state: 'suspended', reason: 'x', authorization_revision: 3 },
    );
    assert.deepEqual(
      dataInForm(
        'support.impersonation.started',
        { grant_id: 'g', expires_at: 't', actor_user_id: 'a' },
        'minimal',
      ),
      { grant_id: 'g', actor_user_id: 'a' },
    );
  });

  test('client.state_changed, signing_key.rotated and security.alert are complete in both forms', () => {
    const data = {
      signal: 's',
      audit_event_id: 'a',
      event_type: 't',
      actor_type: 'user',
      actor_id: 'u',
      extra: 1,
    };
    for (const type of ['client.state_changed', 'signing_key.rotated', 'security.alert'])
      assert.deepEqual(dataInForm(type, data, 'minimal'), data);
  });
});

describe('webhook envelope against the catalog table', () => {
  test('minimal drops exactly the members the catalog marks standard-only', () => {
    for (const [type, entry] of Object.entries(EVENT_CATALOG)) {
      const data = Object.fromEntries(entry.data.map((m: string) => [m, 'x']));
      const kept = Object.keys(dataInForm(type, data, 'minimal'));
      const expected = entry.data.filter(
        (m: string) => !(entry.standardOnly as readonly string[]).includes(m),
      );
      assert.deepEqual(kept, expected, type);
    }
  });
});
