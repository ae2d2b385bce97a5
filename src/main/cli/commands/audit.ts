// identity-cli audit verify --archive DIR (docs/audit.md, "Verifying an archive"): checks the
// files task audit.archive wrote, with no database and no key, prints the JSON report and exits 1
// when it found any problem, so an auditor's script can gate on it.
import { stat } from 'node:fs/promises';
import { verifyArchive } from '../../../audit/index.ts';
import { CONFIG_FLAG, parseFlags } from '../cli-context.ts';
import { CliError } from '../cli-error.ts';
import { cliIo } from '../cli-io.ts';

const USAGE = 'usage: identity-cli audit verify --archive DIR';

export async function audit(argv: string[]): Promise<unknown> {
  const [sub, ...rest] = argv;
  if (sub !== 'verify') throw new CliError(USAGE);
  // --config is accepted like everywhere else; verifying an archive needs nothing from it.
  const { flags, rest: extra } = parseFlags(rest, { ...CONFIG_FLAG, archive: { type: 'string' } });
  const dir = flags.archive as string | undefined;
  if (!dir || extra.length > 0) throw new CliError(USAGE);
  const info = await stat(dir).catch(() => null);
  if (!info?.isDirectory()) throw new CliError(`${dir} is not a directory`);
  const report = await verifyArchive(dir);
  if (!report.ok) cliIo().exitCode = 1;
  return report;
}
