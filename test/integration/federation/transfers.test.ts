// Federation transfers (spec doc 1, "Federation transfer" state table, endpoints table and Limits;
// docs/federation.md, Federation transfers): a draft analysed entry by entry, approved by another
// administrator (ETag/If-Match), applied once keeping link ids and accounts, or cancelled; a
// transfer that collides moves nothing that collides; 10,000 links move in one apply.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { cleanupTransferEntries } from '../../../src/identity-providers/transfers-cleanup.task.ts';
import { count, rows } from '../../harness/signin-kit.ts';
import {
  bulkLinks,
  bulkUsers,
  linksAt,
  NEW_ISSUER,
  OLD_ISSUER,
  settle,
  transferSetup,
} from '../../harness/transfer-kit.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read member by member
type Body = any;
const json = async (r: Response): Promise<Body> => r.json();
const DAY = 86_400_000;

describe('federation › transfers', () => {
  test('case=map: outcomes, two-person approval with If-Match, one apply that keeps ids and accounts', async (t) => {
    const s = await transferSetup(t);
    const [u1, u2, u3, u4, u5, u6, u7, u8] = (await bulkUsers(s, 8, 'map')) as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    const src = await bulkLinks(
      s,
      s.oldIdp.id,
      OLD_ISSUER,
      [u1, u2, u3, u4, u5, u7, u8],
      ['s1', 's2', 's3', 's4', 's5', 's6', 's7'],
    );
    const tgt = await bulkLinks(s, s.newIdp.id, NEW_ISSUER, [u3, u6, u5], ['n3', 'nx', 'other']);
    await s.h.ctx.db.query(
      `insert into upstream_tokens (realm_id, linked_identity_id, provider_id, user_id, access_token_sealed,
         created_at, updated_at) values ($1, $2, $3, $4, 'pa1.sealed', now(), now())`,
      [s.realm.id, src.get('s1'), s.oldIdp.id, u1],
    );
    const sessionsBefore = await count(
      s.h,
      'select 1 from sessions where realm_id = $1 and revoked_at is null',
      [s.realm.id],
    );
    const entry = (from: string, to: string) => ({ source_subject: from, target_subject: to });
    const created = await s.admin.call('POST', '/federation-transfers', {
      source_provider_id: s.oldIdp.id,
      target_provider_id: s.newIdp.id,
      mode: 'map',
      reason: 'moving to the new tenant',
      entries: [
        entry('s1', 'n1'),
        entry('s2', 'nx'),
        entry('s3', 'n3'),
        entry('s5', 'n5'),
        entry('nobody', 'n9'),
        entry('s4', 'n4'),
      ],
    });
    const draft = await json(created);
    assert.equal(created.status, 201, JSON.stringify(draft));
    assert.match(draft.id, /^fxt_/);
    assert.equal(draft.state, 'draft');
    assert.ok(created.headers.get('etag'));
    const added = await s.admin.call('POST', `/federation-transfers/${draft.id}/entries`, {
      entries: [entry('s4', 'n4b'), entry('s6', 'nd'), entry('s7', 'nd')],
    });
    const filled = await json(added);
    assert.equal(added.status, 200, JSON.stringify(filled));
    assert.deepEqual(
      { ...filled.summary },
      {
        ready: 1,
        already_linked: 1,
        missing_source: 1,
        ambiguous_source: 0,
        duplicate_source: 2,
        duplicate_target: 2,
        collision_target: 1,
        collision_user: 1,
        target_tenant_required: 0,
        applied: 0,
        total: 9,
      },
    );
    const page = await json(await s.admin.call('GET', `/federation-transfers/${draft.id}/entries?limit=4`));
    assert.deepEqual(
      page.items.map((i: Body) => [i.seq, i.source_subject, i.outcome]),
      [
        [1, 's1', 'ready'],
        [2, 's2', 'collision_target'],
        [3, 's3', 'already_linked'],
        [4, 's5', 'collision_user'],
      ],
    );
    assert.equal(page.next_after, 4);
    const rest = await json(
      await s.admin.call('GET', `/federation-transfers/${draft.id}/entries?after=4&limit=10`),
    );
    assert.deepEqual(
      rest.items.map((i: Body) => i.outcome),
      ['missing_source', 'duplicate_source', 'duplicate_source', 'duplicate_target', 'duplicate_target'],
    );
    assert.equal(rest.next_after, null);

    const byAuthor = await s.admin.call('POST', `/federation-transfers/${draft.id}/approve`);
    assert.equal(byAuthor.status, 403, 'the author does not approve');
    const stale = await s.reviewer.call('POST', `/federation-transfers/${draft.id}/approve`, undefined, {
      'if-match': created.headers.get('etag') as string,
    });
    assert.equal(stale.status, 412, 'adding entries changed the ETag');
    assert.equal((await json(stale)).code, 'precondition_failed');
    assert.equal(
      (await s.admin.call('POST', `/federation-transfers/${draft.id}/apply`)).status,
      409,
      'draft',
    );
    const approved = await s.reviewer.call('POST', `/federation-transfers/${draft.id}/approve`, undefined, {
      'if-match': added.headers.get('etag') as string,
    });
    const a = await json(approved);
    assert.equal(approved.status, 200, JSON.stringify(a));
    assert.equal(a.state, 'approved');
    assert.deepEqual(a.approved_by, { type: 'user', id: s.reviewer.userId });
    const late = await s.admin.call('POST', `/federation-transfers/${draft.id}/entries`, {
      entries: [entry('s9', 'n9')],
    });
    assert.equal(late.status, 409, 'entries go into drafts only');

    const applied = await s.admin.call('POST', `/federation-transfers/${draft.id}/apply`);
    const done = await json(applied);
    assert.equal(applied.status, 200, JSON.stringify(done));
    assert.equal(done.state, 'applied');
    assert.equal(done.summary.applied, 1);
    assert.equal(done.summary.ready, 0);

    const moved = await linksAt(s, s.newIdp.id);
    assert.deepEqual(
      moved.map((l) => [l.subject, l.user, l.id, l.provenance]),
      [
        ['n1', u1, src.get('s1'), 'federation_transfer'],
        ['n3', u3, tgt.get('n3'), 'jit'],
        ['nx', u6, tgt.get('nx'), 'jit'],
        ['other', u5, tgt.get('other'), 'jit'],
      ],
      'the ready link moved keeping its id and account; the others at the target are untouched',
    );
    assert.deepEqual(
      (await linksAt(s, s.oldIdp.id)).map((l) => l.subject),
      ['s2', 's4', 's5', 's6', 's7'],
      'the redundant source link of already_linked went; colliding ones stayed',
    );
    assert.equal(await count(s.h, 'select 1 from upstream_tokens where realm_id = $1', [s.realm.id]), 0);
    assert.equal(
      await count(s.h, 'select 1 from sessions where realm_id = $1 and revoked_at is null', [s.realm.id]),
      sessionsBefore,
      'sessions untouched',
    );
    const appliedEntries = await json(
      await s.admin.call('GET', `/federation-transfers/${draft.id}/entries?outcome=applied`),
    );
    assert.deepEqual(
      appliedEntries.items.map((i: Body) => [i.source_subject, i.linked_identity_id]),
      [['s1', src.get('s1')]],
    );

    assert.equal((await s.admin.call('POST', `/federation-transfers/${draft.id}/apply`)).status, 409, 'once');
    assert.equal((await s.admin.call('POST', `/federation-transfers/${draft.id}/cancel`)).status, 409);
    const audits = await rows(
      s.h,
      `select type, actor_id from audit_events where realm_id = $1 and target_id = $2 order by id`,
      [s.realm.id, draft.id],
    );
    assert.deepEqual(
      audits.map((r) => [r.type, r.actor_id]),
      [
        ['federation.transfer.created', s.admin.userId],
        ['federation.transfer.entries_added', s.admin.userId],
        ['federation.transfer.approved', s.reviewer.userId],
        ['federation.transfer.applied', s.admin.userId],
      ],
    );
    const list = await json(await s.reviewer.call('GET', '/federation-transfers'));
    assert.deepEqual(
      list.items.map((i: Body) => i.id),
      [draft.id],
    );
    const got = await s.reviewer.call('GET', `/federation-transfers/${draft.id}`);
    assert.equal(got.status, 200);
    assert.equal(got.headers.get('etag'), applied.headers.get('etag'));
  });

  test('case=a transfer that collides: nothing applicable is 409 at approval, and nothing changed', async (t) => {
    const s = await transferSetup(t);
    const [u1, u2] = (await bulkUsers(s, 2, 'col')) as [string, string];
    await bulkLinks(s, s.oldIdp.id, OLD_ISSUER, [u1], ['s1']);
    await bulkLinks(s, s.newIdp.id, NEW_ISSUER, [u2], ['n1']);
    const before = await rows(s.h, 'select * from linked_identities where realm_id = $1 order by id', [
      s.realm.id,
    ]);
    const created = await json(
      await s.admin.call('POST', '/federation-transfers', {
        source_provider_id: s.oldIdp.id,
        target_provider_id: s.newIdp.id,
        mode: 'map',
        reason: 'collides',
        entries: [{ source_subject: 's1', target_subject: 'n1' }],
      }),
    );
    assert.equal(created.summary.collision_target, 1);
    const refused = await s.reviewer.call('POST', `/federation-transfers/${created.id}/approve`);
    assert.equal(refused.status, 409);
    assert.equal((await json(refused)).code, 'conflict');
    assert.deepEqual(
      await rows(s.h, 'select * from linked_identities where realm_id = $1 order by id', [s.realm.id]),
      before,
      'nothing linked, nothing changed',
    );
    assert.equal((await s.admin.call('POST', `/federation-transfers/${created.id}/cancel`)).status, 204);
    const cancelled = await json(await s.admin.call('GET', `/federation-transfers/${created.id}`));
    assert.equal(cancelled.state, 'cancelled');
    assert.equal((await s.admin.call('POST', `/federation-transfers/${created.id}/cancel`)).status, 409);
    assert.equal((await s.reviewer.call('POST', `/federation-transfers/${created.id}/approve`)).status, 409);

    // Entries stay 180 days after the cancel, then go; the transfer record stays.
    const entriesOf = () =>
      count(s.h, 'select 1 from federation_transfer_entries where realm_id = $1 and transfer_id = $2', [
        s.realm.id,
        created.id,
      ]);
    await cleanupTransferEntries(s.h.ctx, new Date(Date.now() + 179 * DAY));
    assert.equal(await entriesOf(), 1, 'kept 179 days on');
    await cleanupTransferEntries(s.h.ctx, new Date(Date.now() + 181 * DAY));
    assert.equal(await entriesOf(), 0, 'gone after 180 days');
    assert.equal((await s.admin.call('GET', `/federation-transfers/${created.id}`)).status, 200);
  });

  test('case=a link made at the target after approval collides at apply and does not move', async (t) => {
    const s = await transferSetup(t);
    const [u1, u2, u3] = (await bulkUsers(s, 3, 'race')) as [string, string, string];
    const src = await bulkLinks(s, s.oldIdp.id, OLD_ISSUER, [u1, u2], ['s1', 's2']);
    const created = await json(
      await s.admin.call('POST', '/federation-transfers', {
        source_provider_id: s.oldIdp.id,
        target_provider_id: s.newIdp.id,
        mode: 'same_subject',
        reason: 'same subjects upstream',
      }),
    );
    assert.equal(created.summary.ready, 2);
    assert.equal((await s.reviewer.call('POST', `/federation-transfers/${created.id}/approve`)).status, 200);
    await bulkLinks(s, s.newIdp.id, NEW_ISSUER, [u3], ['s2']);
    const applied = await json(await s.admin.call('POST', `/federation-transfers/${created.id}/apply`));
    assert.equal(applied.state, 'applied');
    assert.equal(applied.summary.applied, 1);
    assert.equal(applied.summary.collision_target, 1);
    assert.deepEqual(
      (await linksAt(s, s.oldIdp.id)).map((l) => [l.subject, l.id, l.user]),
      [['s2', src.get('s2'), u2]],
      'the colliding link stayed where it was',
    );
    assert.deepEqual(
      (await linksAt(s, s.newIdp.id)).map((l) => [l.subject, l.user]),
      [
        ['s1', u1],
        ['s2', u3],
      ],
    );
  });

  test('case=same_subject into a {tenant} issuer: 10,000 links move in one apply', async (t) => {
    const s = await transferSetup(t, {
      issuer: 'https://login.example.net/{tenant}/v2.0',
      config: {
        discovery_url: 'https://login.example.net/organizations/v2.0/.well-known/openid-configuration',
      },
    });
    const n = 10_000;
    const users = await bulkUsers(s, n, 'bulk');
    const subjects = users.map((_, i) => `subject-${i}`);
    const src = await bulkLinks(s, s.oldIdp.id, OLD_ISSUER, users, subjects);
    const body = {
      source_provider_id: s.oldIdp.id,
      target_provider_id: s.newIdp.id,
      mode: 'same_subject',
      reason: 'into the tenant',
    };
    const untenanted = await json(await s.admin.call('POST', '/federation-transfers', body));
    assert.equal(untenanted.summary.target_tenant_required, n);
    assert.equal(
      (await s.reviewer.call('POST', `/federation-transfers/${untenanted.id}/approve`)).status,
      409,
    );
    assert.equal((await s.admin.call('POST', `/federation-transfers/${untenanted.id}/cancel`)).status, 204);

    const created = await s.admin.call('POST', '/federation-transfers', {
      ...body,
      target_tenant: 'contoso',
    });
    const draft = await json(created);
    assert.equal(created.status, 201, JSON.stringify(draft));
    assert.equal(draft.summary.ready, n);
    assert.equal(
      (
        await s.admin.call('POST', `/federation-transfers/${draft.id}/entries`, {
          entries: [{ source_subject: 'a', target_subject: 'b' }],
        })
      ).status,
      409,
      'same_subject transfers take no entries',
    );
    assert.equal((await s.reviewer.call('POST', `/federation-transfers/${draft.id}/approve`)).status, 200);
    const applied = await json(await s.admin.call('POST', `/federation-transfers/${draft.id}/apply`));
    assert.equal(applied.summary.applied, n);
    const moved = await linksAt(s, s.newIdp.id);
    assert.equal(moved.length, n);
    assert.equal(
      await count(s.h, 'select 1 from linked_identities where realm_id = $1 and provider_id = $2', [
        s.realm.id,
        s.oldIdp.id,
      ]),
      0,
    );
    const sample = moved.find((l) => l.subject === 'subject-4242');
    assert.deepEqual(sample, {
      issuer: 'https://login.example.net/contoso/v2.0',
      subject: 'subject-4242',
      user: users[4242],
      id: src.get('subject-4242'),
      provenance: 'federation_transfer',
    });
  });

  test('case=what a transfer request must hold', async (t) => {
    const s = await transferSetup(t);
    const org = await json(
      await s.admin.call('POST', '/organizations', { slug: 'org-one', display_name: 'Org One' }),
    );
    const base = {
      source_provider_id: s.oldIdp.id,
      target_provider_id: s.newIdp.id,
      mode: 'map',
      reason: 'checks',
    };
    const refused = async (input: Record<string, unknown>, status: number, field: string) => {
      const res = await s.admin.call('POST', '/federation-transfers', input);
      const b = await json(res);
      assert.equal(res.status, status, JSON.stringify(b));
      assert.ok(
        (b.errors ?? []).some((e: Body) => e.field === field),
        `${field} named in ${JSON.stringify(b)}`,
      );
    };
    await refused({ ...base, target_provider_id: s.oldIdp.id }, 422, 'target_provider_id');
    await refused(
      { ...base, source_provider_id: 'idp_00000000000000000000000000' },
      422,
      'source_provider_id',
    );
    await refused({ ...base, reason: 'x'.repeat(501) }, 422, 'reason');
    await refused({ ...base, mode: 'same_subject', entries: [] }, 422, 'entries');
    await refused({ ...base, target_tenant: 'contoso' }, 422, 'target_tenant');
    await refused(
      { ...base, entries: [{ source_subject: 'a\nb', target_subject: 'b' }] },
      422,
      'entries[0].source_subject',
    );
    await refused({ ...base, surprise: true }, 400, 'surprise');
    {
      const orgIdp = await json(
        await s.admin.call('POST', `/organizations/${org.id}/identity-providers`, {
          alias: 'org-idp',
          display_name: 'Org',
          issuer: 'https://org-idp.example.com',
          config: { client_id: 'c', token_endpoint_auth_method: 'none' },
        }),
      );
      await refused({ ...base, target_provider_id: orgIdp.id }, 422, 'target_provider_id');
    }
    // At most 50,000 entries per transfer (doc 1, Limits): a draft holding 49,999 takes one more.
    const draft = await json(await s.admin.call('POST', '/federation-transfers', base));
    await s.h.ctx.db.query(
      `insert into federation_transfer_entries (realm_id, transfer_id, seq, source_subject, target_subject, outcome)
       select $1, $2, g, 's' || g, 't' || g, 'missing_source' from generate_series(1, 49999) g`,
      [s.realm.id, draft.id],
    );
    await settle();
    const two = [
      { source_subject: 'x1', target_subject: 'y1' },
      { source_subject: 'x2', target_subject: 'y2' },
    ];
    const over = await s.admin.call('POST', `/federation-transfers/${draft.id}/entries`, { entries: two });
    assert.equal(over.status, 422);
    assert.equal((await json(over)).errors[0].field, 'entries');
    const full = await s.admin.call('POST', `/federation-transfers/${draft.id}/entries`, {
      entries: two.slice(0, 1),
    });
    assert.equal(full.status, 200);
    assert.equal((await json(full)).summary.total, 50_000);
    const reader = await s.admin.call('GET', '/federation-transfers/fxt_00000000000000000000000000');
    assert.equal(reader.status, 404);
    const bad = await s.admin.call('GET', '/federation-transfers?cursor=nope');
    assert.equal(bad.status, 400);
  });
});
