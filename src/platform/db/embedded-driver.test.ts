import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { EMBEDDED_PACKAGE, EmbeddedDriverMissing, loadEmbeddedDriver } from './embedded-driver.ts';

const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies: Record<string, string>;
  peerDependenciesMeta: Record<string, { optional?: boolean }>;
};

const missing = () => {
  const e = new Error(
    `Cannot find package '${EMBEDDED_PACKAGE}' imported from /opt/x/dist/platform/db/pglite.js`,
  );
  Object.assign(e, { code: 'ERR_MODULE_NOT_FOUND' });
  return Promise.reject(e);
};

describe('platform › db › embedded driver', () => {
  test('case=PGlite is an optional peer, present in a checkout, absent from the dependencies', () => {
    assert.equal(manifest.dependencies[EMBEDDED_PACKAGE], undefined);
    assert.equal(manifest.peerDependenciesMeta[EMBEDDED_PACKAGE]?.optional, true);
    assert.equal(manifest.devDependencies[EMBEDDED_PACKAGE], manifest.peerDependencies[EMBEDDED_PACKAGE]);
  });

  test('case=a missing package becomes a message naming the version to install', async () => {
    const err = await loadEmbeddedDriver(missing).then(
      () => assert.fail('resolved'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof EmbeddedDriverMissing);
    assert.match(
      err.message,
      new RegExp(`npm install ${EMBEDDED_PACKAGE}@${manifest.peerDependencies[EMBEDDED_PACKAGE]}$`),
    );
    assert.match(err.message, /database\.url/);
  });

  test('case=any other failure to load is not disguised', async () => {
    const other = Object.assign(new Error("Cannot find module './nothing.js'"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    await assert.rejects(
      loadEmbeddedDriver(() => Promise.reject(other)),
      (e) => e === other,
    );
  });

  test('case=in a checkout the driver loads', async () => {
    const driver = await loadEmbeddedDriver();
    assert.equal(typeof driver.openPglite, 'function');
  });
});
