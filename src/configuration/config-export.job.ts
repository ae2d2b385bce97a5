// The config.export job (spec doc 2, Jobs and exports; doc 1, Endpoints: Configuration): queued by
// POST /configuration/exports, run by the worker while its requester still holds
// realm.configuration.export (the runner re-checks it). The file is the realm's configuration
// document, read in one snapshot so it is something an import can take as a whole.
import type { JobType } from '../jobs/index.ts';
import { permanentFailure } from '../jobs/index.ts';
import type { Db } from '../platform/db/db.ts';
import { findRealmById } from '../realms/index.ts';
import { exportConfiguration } from './config-export.ts';

export interface ConfigExportDeps {
  db: Db;
  /** server.public_origin: the built-in audiences in the document derive from it. */
  publicOrigin: string;
}

export const configExportJob: JobType<ConfigExportDeps> = {
  name: 'config.export',
  permission: 'realm.configuration.export',
  async run(deps, job) {
    const document = await deps.db.tx(async (tx) => {
      const realm = await findRealmById(tx, job.realmId);
      return realm ? exportConfiguration(tx, { realm, publicOrigin: deps.publicOrigin }) : null;
    });
    if (!document) return permanentFailure('the realm no longer exists');
    await job.progress('configuration', 1);
    return { kind: 'file', format: 'json', body: `${JSON.stringify(document, null, 2)}\n` };
  },
};
