// Identity read evidence (spec doc 2, Data lifecycle 2): with data_access.log_identity_reads the
// read is recorded before data returns, and a failed write fails the request with no data in it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiCaller } from '../../harness/api-kit.ts';
import { startHarness } from '../../harness/harness.ts';
import { audits } from '../../harness/signin-kit.ts';

describe('audit › identity read evidence', () => {
  test('case=a failed user.read or user.search write fails the read and returns no data', async (t) => {
    const h = await startHarness(t);
    const realm = await h.createRealm();
    const admin = await apiCaller(h, realm);
    const user = await h.createUser(realm, { email: 'private-person@example.com' });
    await h.setPolicy(realm, { data_access: { log_identity_reads: true } });
    // The audit store refuses identity-read records (a full disk, a revoked grant, ...).
    await h.ctx.db.exec(`
      create function refuse_identity_reads() returns trigger language plpgsql as $$
      begin
        if new.type in ('user.read', 'user.search') then raise exception 'audit store unavailable'; end if;
        return new;
      end $$;
      create trigger refuse_identity_reads before insert on audit_events
        for each row execute function refuse_identity_reads();`);

    for (const path of [`/users/${user.id}`, '/users', '/users?identifier=private-person@example.com']) {
      const res = await admin.call('GET', path);
      assert.equal(res.status, 500, path);
      const text = await res.text();
      assert.doesNotMatch(text, /private-person|usr_/, 'no data leaves with a failed evidence write');
      assert.equal(JSON.parse(text).code, 'internal_error');
    }

    // With logging off, the same reads do not depend on the audit store.
    await h.setPolicy(realm, { data_access: { log_identity_reads: false } });
    assert.equal((await admin.call('GET', `/users/${user.id}`)).status, 200);
    assert.equal((await audits(h, realm, 'user.read')).length, 0);
  });
});
