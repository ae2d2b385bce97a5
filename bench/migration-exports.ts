// Synthetic source exports for scale (docs/migration.md, Scale): N users (default 10,000) in the
// shapes of the fixtures in test/fixtures/migration (a Keycloak 26 realm export, a ZITADEL v4
// data export, a SuperTokens 12 database-derived export), written to a directory, then each one
// converted offline by the same adapters identity-cli migrate-from uses, with the time it took.
// Every user has an email, a username (where the source has one) and a password verifier taken
// from test/fixtures/password-vectors; every fifth a TOTP seed; users spread over 10 organizations.
//
// usage: node --import tsx bench/migration-exports.ts [N] [DIR]
//        then, against a running server after identity-cli login:
//        identity-cli migrate-from keycloak --input DIR/keycloak.json --source-system kc-bench --apply
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { adapterNamed, buildDocuments, defaultMappingOf } from '../src/imports/adapters/index.ts';

const N = Number(process.argv[2] ?? 10_000);
const DIR = process.argv[3] ?? 'bench/.work/migration';
const vectors = JSON.parse(readFileSync('test/fixtures/password-vectors/vectors.json', 'utf8'));
const KC = vectors['keycloak_pbkdf2-sha256_short'];
const BCRYPT = vectors.bcrypt_2b.hash as string;
const SEED = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
const uuid = (kind: number, i: number) =>
  `${kind.toString(16).padStart(8, '0')}-0000-4000-8000-${i.toString(16).padStart(12, '0')}`;
const ORGS = 10;

function keycloak() {
  const users = Array.from({ length: N }, (_, i) => ({
    id: uuid(1, i),
    username: `user${i}`,
    email: `user${i}@bench.example`,
    emailVerified: true,
    enabled: true,
    firstName: 'User',
    lastName: String(i),
    credentials: [
      { type: 'password', credentialData: KC.credential_data, secretData: KC.secret_data },
      ...(i % 5 === 0
        ? [
            {
              type: 'otp',
              secretData: JSON.stringify({ value: `raw-seed-${i}-0123456789` }),
              credentialData: JSON.stringify({
                subType: 'totp',
                digits: 6,
                period: 30,
                algorithm: 'HmacSHA1',
              }),
            },
          ]
        : []),
    ],
    realmRoles: ['default-roles-bench'],
  }));
  const organizations = Array.from({ length: ORGS }, (_, o) => ({
    id: uuid(2, o),
    name: `Bench Org ${o}`,
    alias: `bench-org-${o}`,
    enabled: true,
    members: users.filter((_, i) => i % ORGS === o).map((u) => ({ username: u.username })),
  }));
  return { id: 'bench', realm: 'bench', keycloakVersion: '26.0.7', users, organizations };
}

function zitadel() {
  return {
    orgs: Array.from({ length: ORGS }, (_, o) => ({
      orgId: String(300000000000000000n + BigInt(o)),
      org: { name: `Bench Org ${o}` },
      humanUsers: Array.from({ length: Math.ceil((N - o) / ORGS) }, (_, k) => o + k * ORGS).map((i) => ({
        userId: String(310000000000000000n + BigInt(i)),
        user: {
          userName: `user${i}`,
          profile: { firstName: 'User', lastName: String(i), displayName: `User ${i}` },
          email: { email: `user${i}@bench.example`, isEmailVerified: true },
          hashedPassword: { value: BCRYPT, algorithm: 'bcrypt' },
          ...(i % 5 === 0 ? { otpCode: SEED } : {}),
        },
      })),
    })),
  };
}

function supertokens() {
  return {
    core_version: '12.0.4',
    users: Array.from({ length: N }, (_, i) => ({
      id: uuid(3, i),
      userMetadata: {},
      userRoles: [],
      totpDevices: i % 5 === 0 ? [{ secretKey: SEED, period: 30, skew: 1, deviceName: 'phone' }] : [],
      loginMethods: [
        {
          tenantIds: ['public', `tenant-${i % ORGS}`],
          isVerified: true,
          isPrimary: true,
          timeJoinedInMSSinceEpoch: 1727766000000,
          recipeId: 'emailpassword',
          email: `user${i}@bench.example`,
          passwordHash: BCRYPT,
          hashingAlgorithm: 'BCRYPT',
        },
      ],
    })),
  };
}

mkdirSync(DIR, { recursive: true, mode: 0o700 });
const made = { keycloak: keycloak(), zitadel: zitadel(), supertokens: supertokens() };
for (const [name, doc] of Object.entries(made)) {
  const file = join(DIR, `${name}.json`);
  writeFileSync(file, JSON.stringify(doc), { mode: 0o600 });
  const adapter = adapterNamed(name);
  if (!adapter) throw new Error(name);
  const t0 = performance.now();
  const conversion = adapter.convert([JSON.parse(readFileSync(file, 'utf8'))], {
    sourceSystem: `${name}-bench`,
    sourceVersion: name === 'zitadel' ? 'v4' : undefined,
    keepAttributes: false,
  });
  const built = buildDocuments(conversion, defaultMappingOf(), {
    sourceSystem: `${name}-bench`,
    importTotp: true,
    trustEmailVerification: false,
    allowOwnerRoles: false,
    batchSize: 500,
  });
  const ms = performance.now() - t0;
  process.stdout.write(
    `${name}: ${N} users, ${built.documents.length} documents, expected ${JSON.stringify(built.expected)}, ` +
      `read and converted in ${ms.toFixed(0)} ms\n`,
  );
}
