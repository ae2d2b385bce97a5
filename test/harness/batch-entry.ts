// Runs several test files in one process, one after another (scripts/run-tests.ts starts it with the
// compiled files as arguments). Each file is imported inside a suite named after it, so its
// top-level before/after hooks stay its own, and the next file is imported only once that suite
// has ended: a file's tests never overlap another's, and each file gets a database of its own
// (fileDatabase() opens one lazily; it is closed here when the file ends). What a process of its
// own cost per file (starting Node.js, loading the application, loading the embedded database's
// code) is paid once per batch.
import { relative } from 'node:path';
import { after, describe } from 'node:test';
import { pathToFileURL } from 'node:url';
import { Agent, getGlobalDispatcher, setGlobalDispatcher } from 'undici';
import { closeFileDatabase } from './test-db.ts';

/**
 * What one file leaves behind that the next must not inherit: its database, and the keep-alive
 * connections of fetch's shared pool (a later file's server can get the same port, and a request
 * would then go out on a socket the earlier server closed).
 */
async function endFile(): Promise<void> {
  await closeFileDatabase();
  const pool = getGlobalDispatcher();
  setGlobalDispatcher(new Agent());
  await pool.close();
}

const buildDir = process.env.PROUDAUTH_TEST_BUILD_DIR ?? process.cwd();

for (const file of process.argv.slice(2)) {
  const name = relative(buildDir, file).replace(/\.js$/, '.ts');
  await new Promise<void>((ended) => {
    describe(name, async () => {
      try {
        await import(pathToFileURL(file).href);
      } catch (e) {
        await endFile();
        ended();
        throw e;
      }
      after(async () => {
        await endFile();
        ended();
      });
    });
  });
}
