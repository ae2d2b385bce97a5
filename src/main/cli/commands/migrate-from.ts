// identity-cli migrate-from keycloak|zitadel|supertokens (spec doc 2, "Migration adapters";
// docs/migration.md): reads exports, converts them into service.user-import.v1 documents and the
// organizations they need, and writes the report service.migration-report.v1 (mode 0600, also on
// failure). --offline converts only; the default plan validates with dry-run imports; --apply
// imports and ends with a reconciliation whose mismatch exits non-zero.
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  AdapterError,
  adapterNamed,
  buildDocuments,
  conversionReport,
  defaultMappingOf,
  mappingTemplate,
  readMapping,
} from '../../../imports/adapters/index.ts';
import { parseFlags } from '../../../platform/cli/flags.ts';
import { requireSignIn } from '../admin-api.ts';
import { CliError } from '../cli-error.ts';
import { cliIo } from '../cli-io.ts';
import { serverFlag } from '../configured-server.ts';
import { MigrationApi } from '../migration-api.ts';
import {
  applyBatches,
  type BatchOutcome,
  dryRun,
  missingRoles,
  planOrganizationsOf,
  reconcile,
} from './migrate-run.ts';

const USAGE = `usage: identity-cli migrate-from keycloak|zitadel|supertokens --input FILE [--input FILE]...
    --source-system NAME [--source-version V] [--realm NAME (main)] [--plan | --apply | --offline]
    [--mapping FILE] [--write-mapping-template FILE] [--report FILE] [--write-documents DIR]
    [--trust-email-verification --verification-reason TEXT] [--import-totp] [--allow-owner-roles]
    [--keep-attributes] [--batch-size 1..1000 (500)] [--server URL] [--credentials FILE]`;

const SOURCE_SYSTEM = /^[a-z0-9][a-z0-9._-]{0,63}$/;

function readJson(file: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new CliError(`cannot read ${what} ${file}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new CliError(`${what} ${file} is not JSON: ${(e as Error).message}`);
  }
}

/** Secret-bearing files: created 0600 (and set so when they existed). */
function writePrivate(file: string, value: unknown): void {
  writeFileSync(file, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
}

function options(argv: string[]) {
  const { flags, rest } = parseFlags(argv, {
    config: { type: 'string' },
    input: { type: 'list' },
    realm: { type: 'string', default: 'main' },
    'source-system': { type: 'string' },
    'source-version': { type: 'string' },
    mapping: { type: 'string' },
    'write-mapping-template': { type: 'string' },
    plan: { type: 'bool' },
    apply: { type: 'bool' },
    offline: { type: 'bool' },
    report: { type: 'string' },
    'write-documents': { type: 'string' },
    'trust-email-verification': { type: 'bool' },
    'verification-reason': { type: 'string' },
    'import-totp': { type: 'bool' },
    'allow-owner-roles': { type: 'bool' },
    'keep-attributes': { type: 'bool' },
    'batch-size': { type: 'string', default: '500' },
    server: { type: 'string' },
    credentials: { type: 'string' },
  });
  const [name, ...extra] = rest;
  const adapter = name ? adapterNamed(name) : undefined;
  if (!adapter || extra.length > 0) throw new CliError(USAGE);
  const inputs = flags.input as string[];
  const sourceSystem = flags['source-system'] as string | undefined;
  if (inputs.length === 0) throw new CliError(`--input is required\n${USAGE}`);
  if (!sourceSystem || !SOURCE_SYSTEM.test(sourceSystem))
    throw new CliError(
      '--source-system is required: [a-z0-9][a-z0-9._-]{0,63}, the same for the whole migration',
    );
  if (flags.offline && flags.apply)
    throw new CliError('--offline converts only: it cannot be combined with --apply');
  if (flags.plan && flags.apply) throw new CliError('choose one of --plan and --apply');
  const batchSize = Number(flags['batch-size']);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 1000)
    throw new CliError('--batch-size is 1..1000');
  const reason = flags['verification-reason'] as string | undefined;
  if (flags['trust-email-verification'] && (!reason || reason.length < 10))
    throw new CliError('--trust-email-verification needs --verification-reason of at least 10 characters');
  return {
    adapter,
    inputs,
    sourceSystem,
    mode: flags.apply ? 'apply' : flags.offline ? 'offline' : 'plan',
    flags,
    batchSize,
    reason,
    reportFile: (flags.report as string | undefined) ?? `migration-report-${sourceSystem}.json`,
  } as const;
}

export async function migrateFrom(argv: string[]): Promise<unknown> {
  const o = options(argv);
  const report: Record<string, unknown> = {
    format: 'service.migration-report.v1',
    adapter: o.adapter.name,
    source_system: o.sourceSystem,
    mode: o.mode,
    realm: o.flags.realm,
    started_at: new Date().toISOString(),
    outcome: 'failed',
  };
  try {
    await run(o, report);
    return summary(report);
  } catch (e) {
    report.error =
      e instanceof AdapterError
        ? { member: e.member, code: e.code, detail: e.message }
        : (e as Error).message;
    throw e instanceof AdapterError ? new CliError(`${e.member}: ${e.message}`) : e;
  } finally {
    report.finished_at = new Date().toISOString();
    writePrivate(o.reportFile, report);
    cliIo().stderr.write(`report written to ${o.reportFile}\n`);
  }
}

const summary = (r: Record<string, unknown>) => ({
  outcome: r.outcome,
  mode: r.mode,
  report: r.report_file,
  counts: r.counts,
  import: r.import,
});

async function run(o: ReturnType<typeof options>, report: Record<string, unknown>): Promise<void> {
  report.report_file = o.reportFile;
  const exports = o.inputs.map((f) => readJson(f, 'export'));
  const conversion = o.adapter.convert(exports, {
    sourceSystem: o.sourceSystem,
    sourceVersion: o.flags['source-version'] as string | undefined,
    keepAttributes: o.flags['keep-attributes'] === true,
  });
  const mapping = o.flags.mapping
    ? readMapping(readJson(o.flags.mapping as string, 'mapping'))
    : defaultMappingOf();
  const template = o.flags['write-mapping-template'] as string | undefined;
  if (template) writePrivate(template, mappingTemplate(conversion));
  const built = buildDocuments(conversion, mapping, {
    sourceSystem: o.sourceSystem,
    importTotp: o.flags['import-totp'] === true,
    trustEmailVerification: o.flags['trust-email-verification'] === true,
    verificationReason: o.reason,
    allowOwnerRoles: o.flags['allow-owner-roles'] === true,
    batchSize: o.batchSize,
  });
  Object.assign(report, conversionReport(o.adapter, conversion, o.sourceSystem, built), { mode: o.mode });
  const dir = o.flags['write-documents'] as string | undefined;
  if (dir) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    for (const [i, d] of built.documents.entries())
      writePrivate(join(dir, `user-import-${String(i + 1).padStart(4, '0')}.json`), d);
  }
  if (o.mode === 'offline') {
    report.outcome = 'converted';
    return;
  }
  const api = new MigrationApi(
    requireSignIn({
      realm: o.flags.realm as string,
      server: serverFlag(o.flags),
      credentials: o.flags.credentials as string | undefined,
    }),
  );
  const orgs = await planOrganizationsOf(api, conversion, mapping);
  const missing = await missingRoles(api, built);
  report.organizations = orgs;
  report.missing_roles = missing;
  const conflicts = orgs.filter((x) => x.action === 'conflict');
  if (conflicts.length > 0 || missing.length > 0) {
    // Rule 2: nothing is written while a conflict or a missing role stands.
    report.outcome = 'blocked';
    throw new CliError(
      `blocked before anything was written: ${conflicts.length} organization conflict(s), missing roles [${missing.join(', ')}]; see the report`,
    );
  }
  if (o.mode === 'plan') {
    const toCreate = new Set(orgs.filter((x) => x.action === 'create').map((x) => x.external_id));
    report.dry_run = await dryRun(api, built, toCreate);
    report.outcome = 'planned';
    return;
  }
  const batches: BatchOutcome[] = [];
  report.batches = batches;
  const applied = await applyBatches(api, conversion, built, orgs, batches);
  (report.import as Record<string, unknown>).counts = applied.counts;
  if (applied.stopped) throw new CliError(`the run stopped: ${applied.stopped}; see the report`);
  const reconciliation = await reconcile(api, o.sourceSystem, built);
  (report.import as Record<string, unknown>).reconciliation = reconciliation;
  if (reconciliation.matches !== true) {
    report.outcome = 'mismatch';
    cliIo().exitCode = 1;
    return;
  }
  report.outcome = 'applied';
}
