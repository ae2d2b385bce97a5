// identity-cli audit verify --archive DIR (docs/audit.md, "Verifying an archive") as a real child
// process with no database configured, over an archive the worker's audit.archive task wrote: the
// intact archive verifies and names the chain's head; an edited record, a deleted file, reordered
// lines and swapped files are each reported, with exit status 1.
import assert from 'node:assert/strict';
import { chmod, cp, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { auditWorker, sealedRecord } from '../../harness/audit-kit.ts';
import { rows } from '../../harness/signin-kit.ts';
import { childEnv, run } from './cli-process.ts';

interface Report {
  ok: boolean;
  files: number;
  events: number;
  first_seq: number;
  last_seq: number;
  last_batch_hash: string;
  problems: { kind: string; file: string | null; seq: number | null }[];
}

let archive = '';

async function verify(dir: string) {
  const r = await run('identity-cli', ['audit', 'verify', '-archive', dir], { env: childEnv({}) });
  return { code: r.code, stderr: r.stderr, report: r.stdout ? (JSON.parse(r.stdout) as Report) : null };
}

/** A writable copy of the archive to tamper with, and its files in seq order. */
async function copy(): Promise<{ dir: string; files: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'proudauth-archive-copy-'));
  await cp(archive, dir, { recursive: true });
  const files = (await readdir(dir)).filter((f) => f.endsWith('.ndjson')).sort();
  for (const f of files) await chmod(join(dir, f), 0o640);
  return { dir, files };
}

const kinds = (r: Report | null) => r?.problems.map((p) => `${p.kind}@${p.seq}`) ?? [];

describe('identity-cli › audit verify --archive', () => {
  test('case=the archive the worker wrote verifies, without a database, and names its head', async (t) => {
    // The server and worker stop when this test ends; the later tests need only the files.
    archive = await mkdtemp(join(tmpdir(), 'proudauth-archive-'));
    const a = await auditWorker(t, { overrides: { 'privacy.audit_archive_dir': archive } });
    const realm = await a.h.createRealm();
    await a.seal();
    for (let n = 1; n <= 3; n++) {
      await sealedRecord(a, realm.id, n);
      await sealedRecord(a, realm.id, n + 10);
    }
    await a.archive();
    const [last] = await rows(a.h, 'select seq, batch_hash from audit_batches order by seq desc limit 1');
    const head = { seq: Number(last?.seq), hash: String(last?.batch_hash) };

    const { code, report } = await verify(archive);
    assert.equal(code, 0, JSON.stringify(report));
    assert.equal(report?.ok, true);
    assert.equal(report?.first_seq, 1);
    assert.equal(report?.last_seq, head.seq);
    assert.equal(report?.files, head.seq);
    assert.equal(report?.last_batch_hash, head.hash);
    assert.ok((report?.events ?? 0) >= 7);
  });

  test('case=an edited record is reported', async () => {
    const { dir, files } = await copy();
    const path = join(dir, files[3] as string);
    const text = await readFile(path, 'utf8');
    assert.match(text, /Zoë's change/);
    await writeFile(path, text.replace(/Zoë's change/, "Zoe's change"));
    const { code, report } = await verify(dir);
    assert.equal(code, 1);
    assert.deepEqual(kinds(report), ['event_changed@4']);
  });

  test('case=a deleted file is a gap, in the middle and at the start', async () => {
    const { dir, files } = await copy();
    await rm(join(dir, files[2] as string));
    await rm(join(dir, files[0] as string));
    const { code, report } = await verify(dir);
    assert.equal(code, 1);
    assert.deepEqual(kinds(report), ['batches_missing@2', 'batches_missing@4']);
  });

  test('case=reordered lines and swapped files are reported', async () => {
    const { dir, files } = await copy();
    // Two batches of one event each trade places under each other's names.
    const [second, third] = [join(dir, files[1] as string), join(dir, files[2] as string)];
    await rename(second, `${second}.tmp`);
    await rename(third, second);
    await rename(`${second}.tmp`, third);
    // The lines of the first batch (the realm's creation, several records) in reverse order.
    const first = join(dir, files[0] as string);
    const [header, ...events] = (await readFile(first, 'utf8')).trim().split('\n');
    assert.ok(events.length >= 2, 'the first batch holds several records');
    await writeFile(first, `${[header, ...events.reverse()].join('\n')}\n`);
    const { code, report } = await verify(dir);
    assert.equal(code, 1);
    assert.deepEqual(kinds(report), ['events_hash_mismatch@1', 'malformed_file@2', 'malformed_file@3']);
  });

  test('case=usage errors exit 2; an empty directory is a problem', async () => {
    const usage = await run('identity-cli', ['audit', 'verify'], { env: childEnv({}) });
    assert.equal(usage.code, 2);
    assert.match(usage.stderr, /usage: identity-cli audit verify --archive DIR/);
    const empty = await verify(await mkdtemp(join(tmpdir(), 'proudauth-archive-empty-')));
    assert.equal(empty.code, 1);
    assert.deepEqual(kinds(empty.report), ['empty_archive@null']);
  });
});
