// How a test starts the project's own TypeScript in a child process (a CLI entry point and its
// preloads): the plain JavaScript copy the test runner compiled (scripts/test-runner/compile.ts),
// which node runs without a TypeScript loader, or the sources through tsx when a test file runs on
// its own.
import { join, relative, resolve } from 'node:path';

const ROOT = join(import.meta.dirname, '..', '..');

/** The compiled copy of `source` (a .ts path in the repository) when the runner made one. */
function compiled(source: string): string | null {
  const dir = process.env.PROUDAUTH_TEST_BUILD_DIR;
  return dir ? join(dir, relative(ROOT, resolve(ROOT, source)).replace(/\.ts$/, '.js')) : null;
}

/** node arguments that run `main` after importing each of `preloads` (paths of .ts files). */
export function nodeArgs(main: string, preloads: string[] = []): string[] {
  if (!process.env.PROUDAUTH_TEST_BUILD_DIR)
    return ['--import', 'tsx', ...preloads.flatMap((p) => ['--import', p]), main];
  // --liftoff-only as for the test processes themselves (scripts/run-tests.ts): a CLI child on the
  // embedded database lives too short to earn back an optimizing compile of its WebAssembly.
  return [
    '--liftoff-only',
    ...preloads.flatMap((p) => ['--import', compiled(p) ?? p]),
    compiled(main) ?? main,
  ];
}
