// The realm.export job (spec doc 2, Jobs and exports; Realm data export): queued by
// POST /data-exports, run while its requester still holds realm.data.export (the runner re-checks
// it). Each section is read on its own; the file is built in memory and sealed into the job row.

import type { ConfigExportDeps } from '../configuration/config-export.job.ts';
import { exportConfiguration } from '../configuration/config-export.ts';
import type { Counts, JobType } from '../jobs/index.ts';
import { permanentFailure } from '../jobs/index.ts';
import { issuerOf } from '../kernel/audiences.ts';
import { findRealmById } from '../realms/index.ts';
import {
  ndjsonLine,
  REALM_EXPORT_EXCLUDED,
  REALM_EXPORT_FORMAT,
  REALM_EXPORT_SECTIONS,
  SECTION_READERS,
} from './realm-export.ts';

/** The database, and server.public_origin for the header's issuer and the configuration document. */
export type RealmExportDeps = ConfigExportDeps;

export const realmExportJob: JobType<RealmExportDeps> = {
  name: 'realm.export',
  permission: 'realm.data.export',
  async run(deps, job) {
    const realm = await findRealmById(deps.db, job.realmId);
    if (!realm) return permanentFailure('the realm no longer exists');
    const lines: string[] = [
      ndjsonLine('header', {
        format: REALM_EXPORT_FORMAT,
        generated_at: job.now.toISOString(),
        realm: {
          id: realm.id,
          name: realm.name,
          display_name: realm.display_name,
          issuer: issuerOf(deps.publicOrigin, realm.name),
        },
        excluded: [...REALM_EXPORT_EXCLUDED],
      }),
    ];
    const configuration = await deps.db.tx((tx) =>
      exportConfiguration(tx, { realm, publicOrigin: deps.publicOrigin }),
    );
    lines.push(ndjsonLine('configuration', configuration));
    await job.progress('configuration', 1);
    const counts: Counts = {};
    for (const section of REALM_EXPORT_SECTIONS) {
      const records = await SECTION_READERS[section](deps.db, realm.id);
      for (const data of records) lines.push(ndjsonLine(section, data));
      counts[section] = records.length;
      await job.progress(section, records.length);
    }
    return { kind: 'file', format: 'ndjson', body: lines.join(''), counts };
  },
};
