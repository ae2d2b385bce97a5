// The embedded database (PGlite) is an optional peer of the package: a PostgreSQL deployment
// installs without it (docs/deployment.md). It is loaded here, and only when no database.url is
// set, so `serve`, `worker` and `migrate` on PostgreSQL never touch it. When it is missing, the
// embedded mode stops with a message saying how to add it rather than a module-resolution stack.
import { readFileSync } from 'node:fs';
import type { openPglite } from './pglite.ts';

export const EMBEDDED_PACKAGE = '@electric-sql/pglite';

type Driver = { openPglite: typeof openPglite };

/** The version package.json asks for (its peer range), so the advice installs a matching one. */
function wantedVersion(): string | null {
  try {
    const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      peerDependencies?: Record<string, string>;
    };
    return manifest.peerDependencies?.[EMBEDDED_PACKAGE] ?? null;
  } catch {
    return null;
  }
}

export class EmbeddedDriverMissing extends Error {
  constructor(version: string | null) {
    super(
      `the embedded database needs the optional package ${EMBEDDED_PACKAGE}, which is not installed. ` +
        'Set database.url (PROUDAUTH_DATABASE_URL) to a PostgreSQL database, or install the package ' +
        `next to proudauth: npm install ${EMBEDDED_PACKAGE}${version ? `@${version}` : ''}`,
    );
    this.name = 'EmbeddedDriverMissing';
  }
}

const isMissing = (e: unknown): boolean =>
  (e as { code?: string }).code === 'ERR_MODULE_NOT_FOUND' &&
  String((e as Error).message).includes(EMBEDDED_PACKAGE);

/** The PGlite driver module; EmbeddedDriverMissing when its package is not installed. */
export async function loadEmbeddedDriver(
  load: () => Promise<Driver> = () => import('./pglite.ts'),
): Promise<Driver> {
  try {
    return await load();
  } catch (e) {
    if (isMissing(e)) throw new EmbeddedDriverMissing(wantedVersion());
    throw e;
  }
}
