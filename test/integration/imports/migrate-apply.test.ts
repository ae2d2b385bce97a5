// identity-cli migrate-from --plan and --apply against a running server (spec doc 2, "Migration
// adapters" rules 1 to 4; docs/migration.md): an organization that only shares a proposed slug
// blocks the apply before anything is written; the mapping reuses it; the plan dry-runs every
// batch; the apply imports, reconciles, and every migrated user signs in through the headless
// sign-in API with the old password and old authenticator app; running it again changes nothing.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { encodeBase32 } from '../../../src/mfa/base32.ts';
import type { Operator } from '../../harness/cli-operator-kit.ts';
import { rows } from '../../harness/signin-kit.ts';
import { countIn, fixture, migrationOperator, passwordOf, readJson, signIn } from './migrate-kit.ts';

const LIMIT = { timeout: 300_000 };
const KC_ORG = 'kc-acme:organization:6e0dbf4c-6b8f-4ace-b275-bf916dce4f55';

async function migrate(op: Operator, args: string[]) {
  const report = join(dirname(op.file), `report-${args[0]}.json`);
  const r = await op.cli(['migrate-from', ...args, '--realm', op.realm, '--report', report]);
  return { ...r, report: readJson(report) };
}

async function hashOf(op: Operator, email: string): Promise<string> {
  const [row] = await rows(
    op.h,
    `select p.hash from password_credentials p
       join user_identifiers i on i.realm_id = p.realm_id and i.user_id = p.user_id
       join realms r on r.id = p.realm_id
      where r.name = $1 and i.type = 'email' and i.value_key = lower($2)`,
    [op.realm, email],
  );
  return String(row?.hash);
}

describe('identity-cli migrate-from › apply', () => {
  test(
    'case=Keycloak 26: a slug conflict blocks, the mapping reuses, plan, apply, sign-in, re-run/mode=headless',
    LIMIT,
    async (t) => {
      const op = await migrationOperator(t);
      const taken = await op.cli([
        'api',
        'POST',
        '/organizations',
        '--data',
        JSON.stringify({ slug: 'acme-research', display_name: 'Acme Research (here first)' }),
      ]);
      assert.equal(taken.code, 0, taken.stderr);
      const existingId = JSON.parse(taken.stdout).id as string;
      const args = [
        'keycloak',
        '--input',
        fixture('keycloak-26-realm.json'),
        '--source-system',
        'kc-acme',
        '--import-totp',
        '--trust-email-verification',
        '--verification-reason',
        'verified by the Keycloak realm acme',
        '--keep-attributes',
        '--batch-size',
        '2',
      ];
      const usersBefore = await countIn(op, 'users');

      const blocked = await migrate(op, [...args, '--apply']);
      assert.equal(blocked.code, 2, blocked.stderr);
      assert.match(blocked.stderr, /blocked before anything was written/);
      assert.equal(blocked.report.outcome, 'blocked');
      assert.deepEqual(
        blocked.report.organizations.map((o: { action: string; slug: string }) => [o.action, o.slug]),
        [['conflict', 'acme-research']],
      );
      assert.equal(await countIn(op, 'users'), usersBefore, 'nothing written');
      assert.equal(await countIn(op, 'jobs'), 0);

      const mapping = join(dirname(op.file), 'mapping.json');
      writeFileSync(
        mapping,
        JSON.stringify({
          format: 'service.migration-mapping.v1',
          organizations: { [KC_ORG]: { slug: 'acme-research' } },
          roles: { 'organization:member': ['member'], 'realm-role:editor': ['admin'] },
        }),
      );
      const plan = await migrate(op, [...args, '--mapping', mapping]);
      assert.equal(plan.code, 0, plan.stderr);
      assert.equal(plan.report.outcome, 'planned');
      assert.equal(plan.report.organizations[0].action, 'reuse');
      assert.equal(plan.report.dry_run.counts.would_import, 4, JSON.stringify(plan.report.dry_run));
      assert.equal(await countIn(op, 'users'), usersBefore, 'a plan writes nothing');

      const applied = await migrate(op, [...args, '--mapping', mapping, '--apply']);
      assert.equal(applied.code, 0, applied.stderr + JSON.stringify(applied.report.error));
      assert.equal(applied.report.outcome, 'applied');
      assert.equal(applied.report.batches.length, 2);
      assert.equal(applied.report.import.counts.imported, 4);
      const rec = applied.report.import.reconciliation;
      assert.equal(rec.matches, true, JSON.stringify(rec));
      assert.equal(rec.proof.holds, true, JSON.stringify(rec.proof));
      const members = await rows(
        op.h,
        `select count(*)::int as n from memberships where organization_id = $1 and source = 'import'`,
        [existingId],
      );
      assert.equal(members[0]?.n, 2, 'alice and bob joined the reused organization');

      const aliceSeed = encodeBase32(Buffer.from('kc-raw-secret-0123456', 'utf8'));
      const kc = (v: string) => passwordOf(`keycloak_${v}`);
      assert.equal(await signIn(op, 'alice@acme.example', kc('pbkdf2-sha512'), aliceSeed), 'completed');
      assert.equal(await signIn(op, 'bob@acme.example', kc('argon2')), 'completed');
      await signIn(op, 'carol@acme.example', kc('pbkdf2-sha256'));
      for (const email of ['alice@acme.example', 'bob@acme.example', 'carol@acme.example'])
        assert.match(await hashOf(op, email), /^\$argon2id\$/, `${email}: re-hashed at first sign-in`);
      assert.notEqual(await signIn(op, 'dave@acme.example', kc('pbkdf2')), 'completed', 'dave was disabled');

      const before = { users: await countIn(op, 'users'), memberships: await countIn(op, 'memberships') };
      const again = await migrate(op, [...args, '--mapping', mapping, '--apply']);
      assert.equal(again.code, 0, again.stderr);
      assert.equal(again.report.import.counts.already_imported, 4);
      assert.equal(again.report.import.reconciliation.matches, true);
      assert.deepEqual(
        { users: await countIn(op, 'users'), memberships: await countIn(op, 'memberships') },
        before,
        're-running changes nothing',
      );
    },
  );

  test(
    'case=ZITADEL v4 and SuperTokens 12: apply, reconcile, sign in with password and TOTP, re-run/mode=headless',
    LIMIT,
    async (t) => {
      const op = await migrationOperator(t);
      const zitadel = [
        'zitadel',
        '--input',
        fixture('zitadel-v4-export.json'),
        '--source-system',
        'zitadel-acme',
        '--source-version',
        'v4',
        '--import-totp',
        '--trust-email-verification',
        '--verification-reason',
        'verified by ZITADEL instance',
        '--apply',
      ];
      const z = await migrate(op, zitadel);
      assert.equal(z.code, 0, z.stderr + JSON.stringify(z.report.error));
      assert.equal(z.report.import.reconciliation.matches, true);
      assert.equal(z.report.organizations[0].action, 'create');
      assert.equal(
        await signIn(op, 'erin@acme.example', passwordOf('bcrypt_2a'), 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP'),
        'completed',
      );
      assert.equal(await signIn(op, 'frank@acme.example', passwordOf('phc_argon2id')), 'completed');

      const supertokens = [
        'supertokens',
        '--input',
        fixture('supertokens-12-export.json'),
        '--source-system',
        'st-acme',
        '--import-totp',
        '--trust-email-verification',
        '--verification-reason',
        'verified by SuperTokens core',
        '--apply',
      ];
      const s = await migrate(op, supertokens);
      assert.equal(s.code, 0, s.stderr + JSON.stringify(s.report.error));
      assert.deepEqual(s.report.import.counts, {
        imported: 3,
        already_imported: 0,
        skipped_deleted: 0,
        failed: 0,
      });
      assert.equal(s.report.import.reconciliation.matches, true);
      assert.equal(
        await signIn(op, 'gina@acme.example', passwordOf('bcrypt_2y'), 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ'),
        'completed',
      );
      assert.equal(await signIn(op, 'hank@acme.example', passwordOf('phc_argon2i')), 'completed');

      const users = await countIn(op, 'users');
      for (const args of [zitadel, supertokens]) {
        const again = await migrate(op, args);
        assert.equal(again.code, 0, again.stderr);
        assert.equal(again.report.import.counts.imported ?? 0, 0);
        assert.equal(again.report.import.reconciliation.matches, true);
      }
      assert.equal(await countIn(op, 'users'), users, 're-running changes nothing');
    },
  );
});
