// identity-cli generate-root-key and identity-cli doctor (spec doc 2, operator tools; Key custody).
import { generateRootKey } from '../../../platform/crypto/keyring.ts';
import { doctor as doctorOperation } from '../../operator-operations.ts';
import { CONFIG_FLAG, parseFlags } from '../cli-context.ts';
import { CliError } from '../cli-error.ts';
import { cliIo } from '../cli-io.ts';
import { runOperatorOperation } from '../operator-client.ts';

export async function generateRootKeyCommand(argv: string[]): Promise<string> {
  // --config is accepted like everywhere else; a new key needs nothing from it.
  const { rest } = parseFlags(argv, CONFIG_FLAG);
  if (rest.length > 0) throw new CliError('usage: identity-cli generate-root-key');
  return generateRootKey();
}

/** Fingerprints only: the report can be pasted into a ticket without exposing a key. */
export async function doctor(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, CONFIG_FLAG);
  if (rest.length > 0) throw new CliError('usage: identity-cli doctor [--config FILE]');
  const report = (await runOperatorOperation(flags, doctorOperation, {})) as { ok: boolean };
  if (!report.ok) cliIo().exitCode = 1;
  return report;
}

export { doctorReport } from '../../operator-operations.ts';
