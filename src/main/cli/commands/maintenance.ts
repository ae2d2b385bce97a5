// identity-cli maintenance: shows or sets the deployment's maintenance mode (docs/operations.md,
// Maintenance mode). The change is one database row every server process follows within seconds,
// audited as operations.maintenance.changed.
import { MAINTENANCE_MODES, type MaintenanceMode } from '../../../ops/maintenance.ts';
import { maintenanceSet, maintenanceStatus } from '../../operator-operations.ts';
import { CONFIG_FLAG, parseFlags } from '../cli-context.ts';
import { CliError } from '../cli-error.ts';
import { runOperatorOperation } from '../operator-client.ts';

export const MAINTENANCE_USAGE =
  'usage: identity-cli maintenance status | maintenance off | maintenance set --mode read_only|closed|debug ' +
  '[--message TEXT] [--retry-after SECONDS] [--debug-for DURATION] [--debug-component NAME] [--by NAME]';

const SET_FLAGS = {
  ...CONFIG_FLAG,
  mode: { type: 'string' },
  message: { type: 'string' },
  'retry-after': { type: 'int' },
  'debug-for': { type: 'string' },
  'debug-component': { type: 'string' },
  by: { type: 'string' },
} as const;

const FLAG_NAMES = {
  mode: '--mode',
  message: '--message',
  retry_after_seconds: '--retry-after',
  debug_for: '--debug-for',
  debug_component: '--debug-component',
  by: '--by',
};

/** Flags as the operation's input; the operation checks the values (operator-operations.ts). */
export async function maintenance(argv: string[]): Promise<unknown> {
  const [sub, ...rest] = argv;
  if (sub === 'status') {
    const { flags, rest: extra } = parseFlags(rest, CONFIG_FLAG);
    if (extra.length > 0) throw new CliError(MAINTENANCE_USAGE);
    return runOperatorOperation(flags, maintenanceStatus, {});
  }
  if (sub !== 'set' && sub !== 'off') throw new CliError(MAINTENANCE_USAGE);
  const { flags, rest: extra } = parseFlags(rest, SET_FLAGS);
  if (extra.length > 0) throw new CliError(MAINTENANCE_USAGE);
  const mode = (sub === 'off' ? 'off' : flags.mode) as MaintenanceMode | undefined;
  if (!mode || !MAINTENANCE_MODES.includes(mode))
    throw new CliError(`--mode is one of ${MAINTENANCE_MODES.join(', ')}`);
  const input: Record<string, unknown> = { mode };
  const given: [string, unknown][] = [
    ['message', flags.message],
    ['retry_after_seconds', flags['retry-after']],
    ['debug_for', flags['debug-for']],
    ['debug_component', flags['debug-component']],
    ['by', flags.by],
  ];
  for (const [name, value] of given) if (value !== undefined) input[name] = value;
  return runOperatorOperation(flags, maintenanceSet, input, { flagNames: FLAG_NAMES });
}
