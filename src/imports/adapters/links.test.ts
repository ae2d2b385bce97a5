// Linked identities through the migration adapters (docs/migration.md, "The mapping"): Keycloak
// federatedIdentities, ZITADEL userLinks and SuperTokens third-party login methods become
// linked_identities of the records under the mapping's identity_providers section; a provider the
// mapping does not name stays behind, counted as not carried with the reason.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { adapterNamed, buildDocuments, conversionReport, mappingTemplate, readMapping } from './index.ts';

const fixture = (name: string) =>
  JSON.parse(
    readFileSync(join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'migration', name), 'utf8'),
  );

const DOC_OPTIONS = {
  sourceSystem: 'src',
  importTotp: true,
  trustEmailVerification: false,
  allowOwnerRoles: false,
  batchSize: 500,
};

function convert(name: 'keycloak' | 'zitadel' | 'supertokens', input: unknown, sourceVersion?: string) {
  const adapter = adapterNamed(name);
  assert.ok(adapter);
  return {
    adapter,
    c: adapter.convert([input], { sourceSystem: 'src', sourceVersion, keepAttributes: false }),
  };
}

const linksOf = (docs: Record<string, unknown>[]) =>
  docs.flatMap((d) =>
    (d.users as Record<string, unknown>[]).flatMap((u) =>
      u.linked_identities ? [[u.source_id, u.linked_identities]] : [],
    ),
  );

test('case=Keycloak federatedIdentities follow the mapping; an unmapped provider is reported/mode=offline', () => {
  const { adapter, c } = convert('keycloak', fixture('keycloak-26-realm.json'));
  const template = mappingTemplate(c);
  assert.deepEqual(template.identity_providers, { github: 'github' });

  const unmapped = buildDocuments(c, readMapping({ format: 'service.migration-mapping.v1' }), DOC_OPTIONS);
  assert.deepEqual(linksOf(unmapped.documents), []);
  const report = conversionReport(adapter, c, 'src', unmapped);
  assert.deepEqual((report.counts as Record<string, unknown>).linked_identities, {
    converted: 0,
    converted_with_loss: 0,
    not_carried: 1,
  });
  assert.match(
    JSON.stringify((report.losses as unknown[]).filter((l) => JSON.stringify(l).includes('linked'))),
    /provider github has no connection in the mapping/,
  );

  const again = convert('keycloak', fixture('keycloak-26-realm.json'));
  const mapped = buildDocuments(
    again.c,
    readMapping({ format: 'service.migration-mapping.v1', identity_providers: { github: 'corp-github' } }),
    DOC_OPTIONS,
  );
  const [[, links]] = linksOf(mapped.documents) as [[string, unknown]];
  assert.deepEqual(links, [{ connection_alias: 'corp-github', upstream_subject: '583231' }]);
  const carried = conversionReport(again.adapter, again.c, 'src', mapped);
  assert.deepEqual((carried.counts as Record<string, unknown>).linked_identities, {
    converted: 1,
    converted_with_loss: 0,
    not_carried: 0,
  });
  assert.throws(
    () => readMapping({ format: 'service.migration-mapping.v1', identity_providers: { github: 7 } }),
    /alias/,
  );
});

test('case=ZITADEL userLinks and SuperTokens third-party methods become links/mode=offline', () => {
  const zitadel = fixture('zitadel-v4-export.json');
  const org = zitadel.orgs[0];
  const userId = org.humanUsers[0].userId;
  org.userLinks = [
    { userId, idpId: '2839', idpName: 'Google', providedUserId: 'g-1', providedUserName: 'ada@gmail.com' },
    { userId: 'nobody', idpId: '2839', providedUserId: 'g-2' },
  ];
  const z = convert('zitadel', zitadel, 'v4');
  assert.deepEqual(mappingTemplate(z.c).identity_providers, { 2839: '2839' });
  const zb = buildDocuments(
    z.c,
    readMapping({ format: 'service.migration-mapping.v1', identity_providers: { 2839: 'google' } }),
    DOC_OPTIONS,
  );
  assert.deepEqual(linksOf(zb.documents), [
    [userId, [{ connection_alias: 'google', upstream_subject: 'g-1', upstream_email: 'ada@gmail.com' }]],
  ]);
  assert.equal(z.c.tally.linked_identities.not_carried, 1, 'a link of a user the export lacks');

  const st = fixture('supertokens-12-export.json');
  const user = st.users[0].user ?? st.users[0];
  user.loginMethods.push({
    recipeId: 'thirdparty',
    thirdPartyId: 'google',
    thirdPartyUserId: '1097',
    email: 'st@gmail.com',
    tenantIds: ['public'],
  });
  const s = convert('supertokens', st);
  const sb = buildDocuments(
    s.c,
    readMapping({
      format: 'service.migration-mapping.v1',
      identity_providers: { google: 'google', apple: null },
    }),
    DOC_OPTIONS,
  );
  assert.deepEqual(linksOf(sb.documents), [
    [user.id, [{ connection_alias: 'google', upstream_subject: '1097', upstream_email: 'st@gmail.com' }]],
  ]);
});
