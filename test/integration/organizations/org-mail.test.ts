import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { emailOf } from '../../harness/api-kit.ts';
import { deliverQueued, startMailSink } from '../../harness/mail-kit.ts';
import { accountCaller, body, createOrg, newUser, setup } from './org-test-kit.ts';

describe('organizations › mail', () => {
  test('case=an invitation and its resend are mailed to the invited user', async (t) => {
    const mail = await startMailSink(t);
    const s = await setup(t, mail.overrides);
    const org = await createOrg(s);
    const userId = await newUser(s);
    const to = await emailOf(s.h, s.realm, userId);
    const res = await s.admin.call('POST', `/organizations/${org.id}/invitations`, { user_id: userId });
    assert.equal(res.status, 201);
    const inv = await body(res);
    await deliverQueued(s.h);
    const first = await mail.waitFor(to, 1, s.realm.display_name);
    assert.match(first.subject, new RegExp(`invited to ${org.display_name}`));
    assert.equal(
      (await s.admin.call('POST', `/organizations/${org.id}/invitations/${inv.id}/resend`)).status,
      200,
    );
    await deliverQueued(s.h);
    assert.ok(await mail.waitFor(to, 2, s.realm.display_name));
  });

  test('case=join-request decisions are mailed: approved and denied', async (t) => {
    const mail = await startMailSink(t);
    const s = await setup(t, mail.overrides);
    const org = await createOrg(s);
    const a = await newUser(s);
    const b = await newUser(s);
    const ja = await body(
      await (await accountCaller(s, a)).call('POST', '/me/join-requests', { organization_id: org.id }),
    );
    const jb = await body(
      await (await accountCaller(s, b)).call('POST', '/me/join-requests', { organization_id: org.id }),
    );
    assert.equal(
      (await s.admin.call('POST', `/organizations/${org.id}/join-requests/${ja.id}/approve`, {})).status,
      200,
    );
    assert.equal(
      (await s.admin.call('POST', `/organizations/${org.id}/join-requests/${jb.id}/deny`, {})).status,
      200,
    );
    await deliverQueued(s.h);
    const approved = await mail.waitFor(await emailOf(s.h, s.realm, a), 1, s.realm.display_name);
    assert.match(approved.text, /was approved/);
    const denied = await mail.waitFor(await emailOf(s.h, s.realm, b), 1, s.realm.display_name);
    assert.match(denied.text, /was declined/);
  });
});
