// The end-to-end proof of the migration adapters (docs/migration.md, "Proving a migration"): the
// Keycloak 26, ZITADEL v4 and SuperTokens 12 fixture exports are applied with `identity-cli
// migrate-from <source> --apply` into one realm; each reconciliation matches; one user per source
// signs in through the built-in login UI in Chromium with the old password and the old
// authenticator app; then every migrated user signs in headlessly; and running each command again
// writes nothing (every row of the user tables, audit records and outbox unchanged).
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { encodeBase32 } from '../../../src/mfa/base32.ts';
import { launchBrowser, NO_BROWSER, type TestBrowser } from '../../harness/browser.ts';
import type { Operator } from '../../harness/cli-operator-kit.ts';
import {
  accountPage,
  accountShown,
  collectErrors,
  currentCode,
  enterPassword,
} from '../../harness/login-ui-kit.ts';
import { rows } from '../../harness/signin-kit.ts';
import { fixture, migrationOperator, passwordOf, readJson, signIn } from './migrate-kit.ts';

const LIMIT = { timeout: 600_000 };

interface Source {
  name: string;
  args: string[];
  /** Users that sign in: email, password, base32 seed of the old authenticator app. */
  users: [string, string, string?][];
  /** The one of them who signs in through the login UI in Chromium. */
  browserUser: string;
}

const common = (system: string) => [
  '--source-system',
  system,
  '--import-totp',
  '--trust-email-verification',
  '--verification-reason',
  `verified by the ${system} source system`,
];

function sources(mapping: string): Source[] {
  const kc = (v: string) => passwordOf(`keycloak_${v}`);
  return [
    {
      name: 'keycloak',
      args: ['--input', fixture('keycloak-26-realm.json'), ...common('kc-acme'), '--mapping', mapping],
      users: [
        // Keycloak keeps the raw secret; an authenticator app holds its base32 form
        [
          'alice@acme.example',
          kc('pbkdf2-sha512'),
          encodeBase32(Buffer.from('kc-raw-secret-0123456', 'utf8')),
        ],
        ['bob@acme.example', kc('argon2')],
        ['carol@acme.example', kc('pbkdf2-sha256')],
      ],
      browserUser: 'alice@acme.example',
    },
    {
      name: 'zitadel',
      args: [
        '--input',
        fixture('zitadel-v4-export.json'),
        ...common('zitadel-acme'),
        '--source-version',
        'v4',
      ],
      users: [
        ['erin@acme.example', passwordOf('bcrypt_2a'), 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'],
        ['frank@acme.example', passwordOf('phc_argon2id')],
      ],
      browserUser: 'erin@acme.example',
    },
    {
      name: 'supertokens',
      args: ['--input', fixture('supertokens-12-export.json'), ...common('st-acme')],
      users: [
        ['gina@acme.example', passwordOf('bcrypt_2y'), 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'],
        ['hank@acme.example', passwordOf('phc_argon2i')],
      ],
      browserUser: 'gina@acme.example',
    },
  ];
}

async function migrate(op: Operator, source: Source) {
  const report = join(dirname(op.file), `report-${source.name}.json`);
  const r = await op.cli([
    'migrate-from',
    source.name,
    ...source.args,
    '--realm',
    op.realm,
    '--report',
    report,
    '--apply',
  ]);
  return { ...r, report: readJson(report) };
}

/**
 * What a write would change: row count and a digest of every row of the tables an import writes
 * to, except the audit records of the import jobs themselves (a re-run is an operator's action).
 */
async function snapshot(op: Operator) {
  const out: Record<string, string> = {};
  for (const table of TABLES) {
    const [row] = await rows(
      op.h,
      `select count(*)::int as n, md5(coalesce(string_agg(t::text, '|' order by t::text), '')) as digest
         from ${table} t join realms r on r.id = t.realm_id
        where r.name = $1 ${table === 'audit_events' ? `and t.type not like 'user.import.%'` : ''}`,
      [op.realm],
    );
    out[table] = `${row?.n} rows ${row?.digest}`;
  }
  return out;
}
const TABLES = [
  'users',
  'user_identifiers',
  'password_credentials',
  'totp_credentials',
  'memberships',
  'organizations',
  'imported_audit_events',
  'audit_events',
  'outbox',
];

/** The login UI: the old password, then a code of the old authenticator app. */
async function browserSignIn(
  op: Operator,
  browser: TestBrowser,
  email: string,
  password: string,
  seed: string,
) {
  const page = await (await browser.newContext()).newPage();
  const errors = collectErrors(page);
  await page.goto(accountPage(op.h, op.realm));
  await page.waitForURL(/\/ui\/login\/\?/).catch(async (e) => {
    throw new Error(`${page.url()}\n${await page.content()}\n${errors.join('\n')}\n${e}`);
  });
  await enterPassword(page, email, password);
  await page.getByLabel('Authenticator code').fill(currentCode(op.h, seed));
  await page.getByRole('button', { name: 'Verify' }).click();
  const shown = await accountShown(page);
  assert.match(shown.who, new RegExp(email), `${email} is signed in through the login UI`);
  assert.deepEqual(errors, [], `${email}: no script, policy or network errors`);
  await page.context().close();
}

describe('identity-cli migrate-from › done when', { skip: NO_BROWSER ?? false }, () => {
  test(
    'case=Keycloak 26, ZITADEL v4, SuperTokens 12: apply, reconcile, old password and authenticator in Chromium and headless, re-run writes nothing',
    LIMIT,
    async (t) => {
      const op = await migrationOperator(t, {
        publicOriginIsListener: true,
        overrides: { 'ui.enabled': true },
      });
      const mapping = join(dirname(op.file), 'mapping.json');
      writeFileSync(
        mapping,
        JSON.stringify({
          format: 'service.migration-mapping.v1',
          roles: { 'organization:member': ['member'], 'realm-role:editor': ['admin'] },
        }),
      );
      const all = sources(mapping);
      const imported = new Map<string, number>();
      for (const source of all) {
        const applied = await migrate(op, source);
        assert.equal(
          applied.code,
          0,
          `${source.name}: ${applied.stderr}${JSON.stringify(applied.report.error)}`,
        );
        assert.equal(applied.report.outcome, 'applied', source.name);
        assert.equal(applied.report.import.counts.failed, 0, source.name);
        imported.set(source.name, applied.report.import.counts.imported);
        const rec = applied.report.import.reconciliation;
        assert.equal(rec.matches, true, `${source.name}: ${JSON.stringify(rec)}`);
        assert.equal(rec.proof.holds, true, `${source.name}: ${JSON.stringify(rec.proof)}`);
      }

      // One user per source through the login UI: the imported verifier and seed, first use.
      const browser = await launchBrowser(t);
      for (const source of all) {
        const [email, password, seed] = source.users.find(([e]) => e === source.browserUser) ?? [];
        assert.ok(email && password && seed);
        await browserSignIn(op, browser, email, password, seed);
      }

      // Every migrated user headlessly; an authenticator code is used once per 30-second step.
      op.h.clock.advance(30_000);
      for (const source of all)
        for (const [email, password, seed] of source.users) {
          const status = await signIn(op, email, password, seed);
          assert.equal(status, 'completed', `${source.name}: ${email} signs in with the old password`);
        }
      assert.notEqual(
        await signIn(op, 'dave@acme.example', passwordOf('keycloak_pbkdf2')),
        'completed',
        'dave was disabled in Keycloak and stays suspended',
      );

      // Running every command again: all records already imported, nothing written.
      const before = await snapshot(op);
      const jobAudit = `select a.type from audit_events a join realms r on r.id = a.realm_id
                         where r.name = $1 and a.type like 'user.import.%' order by a.occurred_at, a.type`;
      const jobsBefore = (await rows(op.h, jobAudit, [op.realm])).length;
      for (const source of all) {
        const again = await migrate(op, source);
        assert.equal(again.code, 0, `${source.name}: ${again.stderr}`);
        assert.equal(again.report.import.counts.imported, 0, source.name);
        assert.equal(again.report.import.counts.already_imported, imported.get(source.name), source.name);
        assert.equal(again.report.import.reconciliation.matches, true, source.name);
      }
      assert.deepEqual(await snapshot(op), before, 're-running the three commands writes nothing');
      const jobsAfter = (await rows(op.h, jobAudit, [op.realm])).map((r) => r.type);
      assert.deepEqual(
        jobsAfter.slice(jobsBefore).sort(),
        [...Array(3).fill('user.import.completed'), ...Array(3).fill('user.import.requested')],
        'what is recorded: one import job per re-run, requested and completed',
      );

      // The re-hashed verifiers stay: a re-run does not bring the source's hash back.
      op.h.clock.advance(30_000);
      for (const source of all)
        for (const [email, password, seed] of source.users)
          assert.equal(await signIn(op, email, password, seed), 'completed', `${email} after the re-run`);
    },
  );
});
