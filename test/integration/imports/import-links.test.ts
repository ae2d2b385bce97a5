// Linked identities in a user import (docs/migration.md, Linked identities): a record names an
// upstream connection by alias and the upstream subject; the job links the new account in its own
// transaction, and that person then signs in through the connection into the imported account,
// with no account created just in time. Unknown aliases and subjects linked elsewhere fail the
// record, naming it and the member; dry runs write nothing; a re-run changes nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  connectStandin,
  type FederationSetup,
  federationSetup,
  headless,
  openCallback,
  startFederation,
} from '../../harness/federation-kit.ts';
import { rows } from '../../harness/signin-kit.ts';
import { startStandin } from '../../harness/upstream-standin.ts';
import { runJobs } from '../exports/exports-kit.ts';
import type { OrgSetup } from '../organizations/org-test-kit.ts';
import { footprint, importDoc, postImport, userRecord } from './import-kit.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are read member by member
type Body = any;

/** The import kit's steps need the harness, realm and administrator only. */
const asImportSetup = (s: FederationSetup) => s as unknown as OrgSetup;

async function importReport(s: FederationSetup, doc: unknown): Promise<Body> {
  const res = await postImport(s.admin, doc);
  assert.equal(res.status, 202, await res.clone().text());
  const { job_id } = (await res.json()) as { job_id: string };
  await runJobs(asImportSetup(s));
  return (await s.admin.call('GET', `/user-imports/${job_id}`)).json();
}

const linksOf = (s: FederationSetup) =>
  rows(s.h, 'select * from linked_identities where realm_id = $1 order by id', [s.realm.id]);

describe('imports › linked identities', () => {
  test('case=an imported link signs its account in through the upstream, no new account', async (t) => {
    const s = await federationSetup(t);
    const up = await startStandin(t);
    await connectStandin(s, up, 'corp');
    const record = userRecord({
      linked_identities: [
        { connection_alias: 'CORP', upstream_subject: 'upstream-1', upstream_email: 'ada@upstream.example' },
      ],
    });
    const doc = importDoc([record]);

    const before = await footprint(asImportSetup(s));
    const dry = await postImport(s.admin, doc, { dryRun: true });
    assert.equal(dry.status, 200, await dry.clone().text());
    assert.equal(((await dry.json()) as Body).records[0].status, 'would_import');
    assert.deepEqual(await footprint(asImportSetup(s)), before, 'a dry run writes nothing');
    assert.equal((await linksOf(s)).length, 0);

    const report = await importReport(s, doc);
    assert.equal(report.records[0].status, 'imported', JSON.stringify(report));
    const userId = report.records[0].user_id as string;
    const [link] = await linksOf(s);
    assert.equal(link?.user_id, userId);
    assert.equal(link?.provenance, 'import');
    assert.equal(link?.upstream_issuer, up.issuer);
    assert.equal(link?.upstream_subject, 'upstream-1');
    assert.equal(link?.upstream_email, 'ada@upstream.example');
    assert.equal(link?.last_used_at?.getTime?.(), link?.created_at?.getTime?.());
    const [created] = await rows(
      s.h,
      `select data from audit_events where realm_id = $1 and type = 'user.created' and subject_id = $2`,
      [s.realm.id, userId],
    );
    assert.deepEqual(created?.data.linked_identities, [link?.provider_id]);

    const users = await rows(s.h, 'select id from users where realm_id = $1', [s.realm.id]);
    const tx = await headless(s);
    const started = await startFederation(tx, 'corp');
    const back = await openCallback(await up.authorize(started.body.external_redirect));
    assert.equal(back.status, 200, await back.clone().text());
    const state = (await tx.get()).body;
    assert.equal(state.status, 'completed', JSON.stringify(state));
    assert.deepEqual(state.completed_factors, ['fed']);
    assert.deepEqual(await rows(s.h, 'select id from users where realm_id = $1', [s.realm.id]), users);
    const [used] = await linksOf(s);
    assert.equal(used?.id, link?.id, 'the imported link signed in; no other was made');
    assert.ok(used?.last_used_at > link?.last_used_at, 'the sign-in went through the imported link');
    assert.equal((await linksOf(s)).length, 1);

    // Running the same document again is already_imported and changes nothing.
    const beforeRerun = await footprint(asImportSetup(s));
    const again = await importReport(s, doc);
    assert.equal(again.records[0].status, 'already_imported');
    assert.deepEqual(await linksOf(s), [used]);
    const after = await footprint(asImportSetup(s));
    assert.equal(after.users, beforeRerun.users);
    assert.equal(after.outbox, beforeRerun.outbox);
  });

  test('case=an unknown alias or a subject linked elsewhere fails the record by name; duplicates are refused', async (t) => {
    const s = await federationSetup(t);
    const up = await startStandin(t);
    await connectStandin(s, up, 'corp');
    await importReport(
      s,
      importDoc([
        userRecord({ linked_identities: [{ connection_alias: 'corp', upstream_subject: 'taken' }] }),
      ]),
    );
    const bad = importDoc([
      userRecord({ linked_identities: [{ connection_alias: 'nowhere', upstream_subject: 's-1' }] }),
      userRecord({ linked_identities: [{ connection_alias: 'corp', upstream_subject: 'taken' }] }),
      userRecord({ linked_identities: [{ connection_alias: 'corp', upstream_subject: 'fresh' }] }),
    ]);
    const dry = await postImport(s.admin, bad, { dryRun: true });
    assert.equal(dry.status, 200, await dry.clone().text());
    const plan: Body = await dry.json();
    assert.deepEqual(
      plan.records.map((r: Body) => [r.status, r.errors?.[0]?.member, r.errors?.[0]?.code]),
      [
        ['failed', 'users[0].linked_identities[0].connection_alias', 'unknown_connection'],
        ['failed', 'users[1].linked_identities[0].upstream_subject', 'linked_identity_taken'],
        ['would_import', undefined, undefined],
      ],
    );
    const report = await importReport(s, bad);
    assert.deepEqual(
      report.records.map((r: Body) => r.status),
      ['failed', 'failed', 'imported'],
    );
    assert.equal((await linksOf(s)).length, 2);

    const twice = await postImport(
      s.admin,
      importDoc([
        userRecord({ linked_identities: [{ connection_alias: 'corp', upstream_subject: 'same' }] }),
        userRecord({ linked_identities: [{ connection_alias: 'Corp', upstream_subject: 'same' }] }),
      ]),
      { dryRun: true },
    );
    assert.equal(twice.status, 422);
    const problem: Body = await twice.json();
    assert.equal(problem.errors[0].field, 'users[1].linked_identities[0].upstream_subject');
    assert.equal(problem.errors[0].code, 'duplicate');
  });
});
