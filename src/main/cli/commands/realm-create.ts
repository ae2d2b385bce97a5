// identity-cli realm create NAME [--display-name TEXT]
import { realmCreate as realmCreateOperation } from '../../operator-operations.ts';
import { CONFIG_FLAG, parseFlags } from '../cli-context.ts';
import { CliError } from '../cli-error.ts';
import { runOperatorOperation } from '../operator-client.ts';

export async function realmCreate(argv: string[]): Promise<unknown> {
  const { flags, rest } = parseFlags(argv, { ...CONFIG_FLAG, 'display-name': { type: 'string' } });
  const [name, ...extra] = rest;
  if (!name || extra.length > 0)
    throw new CliError('usage: identity-cli realm create NAME [--display-name TEXT] [--config FILE]');
  const displayName = flags['display-name'] as string | undefined;
  return runOperatorOperation(
    flags,
    realmCreateOperation,
    { name, ...(displayName ? { display_name: displayName } : {}) },
    { flagNames: { name: 'NAME', display_name: '--display-name' } },
  );
}
