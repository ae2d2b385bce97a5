// identity-cli migrate-from without a server (spec doc 2, "Migration adapters"; docs/migration.md):
// --offline converts the fixture exports of Keycloak 26, ZITADEL v4 and SuperTokens 12 into
// service.user-import.v1 documents and the report service.migration-report.v1; files are private
// (0600 in a 0700 directory); unsupported versions and wrong option combinations are refused, and
// the report is written on failure too.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { tempDir } from '../../harness/cli-operator-kit.ts';
import { childEnv, run } from '../cli/cli-process.ts';
import { fixture, modeOf, readJson } from './migrate-kit.ts';

const LIMIT = { timeout: 120_000 };
const cli = (dir: string, args: string[]) =>
  run('identity-cli', ['migrate-from', ...args], {
    env: childEnv({ PROUDAUTH_CREDENTIALS: join(dir, 'none.json') }),
  });

describe('identity-cli migrate-from › offline', () => {
  test(
    'case=a Keycloak 26 realm export converts with its losses reported; documents and report are private',
    LIMIT,
    async (t) => {
      const dir = tempDir(t);
      const report = join(dir, 'report.json');
      const docs = join(dir, 'docs');
      const template = join(dir, 'mapping.json');
      const r = await cli(dir, [
        'keycloak',
        '--input',
        fixture('keycloak-26-realm.json'),
        '--source-system',
        'kc-acme',
        '--offline',
        '--import-totp',
        '--keep-attributes',
        '--report',
        report,
        '--write-documents',
        docs,
        '--write-mapping-template',
        template,
        '--batch-size',
        '3',
      ]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(modeOf(report), 0o600);
      assert.equal(modeOf(docs), 0o700);
      assert.equal(modeOf(join(docs, 'user-import-0001.json')), 0o600);
      assert.equal(modeOf(template), 0o600);
      const rep = readJson(report);
      assert.equal(rep.format, 'service.migration-report.v1');
      assert.equal(rep.outcome, 'converted');
      assert.equal(rep.source_version, '26.0.7');
      assert.equal(rep.documents, 2, '4 users in batches of 3');
      assert.deepEqual(rep.import.expected, {
        expected_users: 4,
        expected_memberships: 2,
        expected_password_verifiers: 4,
        expected_totp_factors: 1,
      });
      assert.deepEqual(rep.counts.groups, { converted: 0, converted_with_loss: 0, not_carried: 2 });
      assert.equal(rep.counts.linked_identities.not_carried, 1);
      assert.equal(rep.counts.clients.not_carried, 1);
      assert.equal(rep.counts.required_actions.not_carried, 1, 'TERMS_AND_CONDITIONS');
      assert.deepEqual(rep.counts.roles, { converted: 2, converted_with_loss: 0, not_carried: 1 });
      assert.deepEqual(rep.unmapped_roles, ['realm-role:editor']);

      const first = readJson(join(docs, 'user-import-0001.json'));
      assert.equal(first.format, 'service.user-import.v1');
      assert.equal(first.import_totp, true);
      const alice = first.users.find((u: { source_id: string }) => u.source_id.startsWith('1a6f'));
      assert.equal(alice.password.format, 'keycloak');
      assert.deepEqual(alice.totp, {
        secret: 'kc-raw-secret-0123456',
        encoding: 'raw',
        digits: 6,
        period: 30,
        algorithm: 'SHA1',
      });
      assert.deepEqual(alice.memberships, [
        {
          organization_external_id: 'kc-acme:organization:6e0dbf4c-6b8f-4ace-b275-bf916dce4f55',
          roles: ['member'],
        },
      ]);
      assert.deepEqual(alice.admin_metadata, {
        migration: { source_system: 'kc-acme', source_attributes: { department: ['R&D'] } },
      });
      const dave = readJson(join(docs, 'user-import-0002.json')).users[0];
      assert.equal(dave.state, 'suspended');
      const map = readJson(template);
      assert.equal(map.format, 'service.migration-mapping.v1');
      assert.deepEqual(map.roles, { 'organization:member': ['member'], 'realm-role:editor': [] });
      assert.equal(
        map.organizations['kc-acme:organization:6e0dbf4c-6b8f-4ace-b275-bf916dce4f55'].slug,
        'acme-research',
      );
    },
  );

  test('case=without --import-totp a seed becomes required action configure_totp', LIMIT, async (t) => {
    const dir = tempDir(t);
    const docs = join(dir, 'docs');
    const r = await cli(dir, [
      'keycloak',
      '--input',
      fixture('keycloak-26-realm.json'),
      '--source-system',
      'kc-acme',
      '--offline',
      '--report',
      join(dir, 'r.json'),
      '--write-documents',
      docs,
    ]);
    assert.equal(r.code, 0, r.stderr);
    const alice = readJson(join(docs, 'user-import-0001.json')).users[0];
    assert.equal(alice.totp, undefined);
    assert.deepEqual(alice.required_actions, ['configure_totp']);
    assert.equal(readJson(join(dir, 'r.json')).import.expected.expected_totp_factors, 0);
  });

  test(
    'case=ZITADEL v4 and SuperTokens 12 exports convert; the core API user list needs --source-version',
    LIMIT,
    async (t) => {
      const dir = tempDir(t);
      const zr = join(dir, 'z.json');
      const z = await cli(dir, [
        'zitadel',
        '--input',
        fixture('zitadel-v4-export.json'),
        '--source-system',
        'zitadel-acme',
        '--source-version',
        'v4.2',
        '--offline',
        '--report',
        zr,
      ]);
      assert.equal(z.code, 0, z.stderr);
      const zrep = readJson(zr);
      assert.deepEqual(
        zrep.counts.users,
        { converted: 1, converted_with_loss: 1, not_carried: 1 },
        'erin loses her metadata without --keep-attributes; the machine user is not an account',
      );
      assert.deepEqual(zrep.unmapped_roles, ['org-role:ORG_OWNER', 'project-role:289442117028093956:reader']);
      assert.equal(zrep.import.expected.expected_password_verifiers, 2);

      const sr = join(dir, 's.json');
      const s = await cli(dir, [
        'supertokens',
        '--input',
        fixture('supertokens-12-export.json'),
        '--source-system',
        'st-acme',
        '--offline',
        '--report',
        sr,
      ]);
      assert.equal(s.code, 0, s.stderr);
      const srep = readJson(sr);
      assert.equal(srep.source_version, '12.0.4');
      assert.equal(srep.counts.password_verifiers.converted, 2);
      assert.equal(srep.counts.password_verifiers.not_carried, 1, 'Firebase scrypt without the signer key');
      assert.equal(srep.counts.organizations.converted, 1, 'tenant acme; public is the realm');

      const api = await cli(dir, [
        'supertokens',
        '--input',
        fixture('supertokens-core-api-users.json'),
        '--source-system',
        'st-acme',
        '--offline',
        '--report',
        sr,
      ]);
      assert.equal(api.code, 2);
      assert.match(api.stderr, /source_version: .*--source-version/);
      assert.equal(readJson(sr).error.code, 'required');
    },
  );

  test(
    "case=an unsupported major, a version that is not the export's, and --offline with --apply are refused",
    LIMIT,
    async (t) => {
      const dir = tempDir(t);
      const old = join(dir, 'kc25.json');
      writeFileSync(
        old,
        JSON.stringify({ ...readJson(fixture('keycloak-26-realm.json')), keycloakVersion: '25.0.6' }),
      );
      const report = join(dir, 'r.json');
      const base = ['--source-system', 'kc-acme', '--offline', '--report', report];
      const refused = await cli(dir, ['keycloak', '--input', old, ...base]);
      assert.equal(refused.code, 2);
      assert.match(refused.stderr, /25\.0\.6 is not supported/);
      assert.equal(modeOf(report), 0o600, 'written on failure too');
      assert.equal(readJson(report).error.code, 'unsupported_version');

      const mismatch = await cli(dir, [
        'keycloak',
        '--input',
        fixture('keycloak-26-realm.json'),
        '--source-version',
        '26.1',
        ...base,
      ]);
      assert.equal(mismatch.code, 2);
      assert.equal(readJson(report).error.code, 'invalid');
      const zitadel = await cli(dir, [
        'zitadel',
        '--input',
        fixture('zitadel-v4-export.json'),
        '--source-version',
        'v3',
        ...base,
      ]);
      assert.equal(zitadel.code, 2);
      assert.equal(readJson(report).error.code, 'unsupported_version');

      const both = await cli(dir, [
        'keycloak',
        '--input',
        fixture('keycloak-26-realm.json'),
        ...base,
        '--apply',
      ]);
      assert.equal(both.code, 2);
      assert.match(both.stderr, /--offline .* --apply/);
    },
  );
});
