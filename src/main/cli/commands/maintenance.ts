// identity-cli maintenance: shows or sets the deployment's maintenance mode (docs/operations.md,
// Maintenance mode). The change is one database row every server process follows within seconds,
// audited as operations.maintenance.changed.
import { OPERATOR_ACTOR } from '../../../audit/audit.types.ts';
import {
  MAINTENANCE_MODES,
  type MaintenanceMode,
  presentMaintenance,
  readMaintenance,
  setMaintenance,
} from '../../../ops/maintenance.ts';
import { parseDuration } from '../../../platform/config/duration.ts';
import { CONFIG_FLAG, parseFlags, withCliContext } from '../cli-context.ts';
import { CliError } from '../cli-error.ts';

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

const MAX_MESSAGE = 500;
const MAX_DEBUG_MS = 24 * 3_600_000;

export async function maintenance(argv: string[]): Promise<unknown> {
  const [sub, ...rest] = argv;
  if (sub === 'status') {
    const { flags, rest: extra } = parseFlags(rest, CONFIG_FLAG);
    if (extra.length > 0) throw new CliError(MAINTENANCE_USAGE);
    return withCliContext(flags, async (ctx) =>
      presentMaintenance(await readMaintenance(ctx.db), ctx.clock.now()),
    );
  }
  if (sub !== 'set' && sub !== 'off') throw new CliError(MAINTENANCE_USAGE);
  const { flags, rest: extra } = parseFlags(rest, SET_FLAGS);
  if (extra.length > 0) throw new CliError(MAINTENANCE_USAGE);
  const mode = (sub === 'off' ? 'off' : flags.mode) as MaintenanceMode | undefined;
  if (!mode || !MAINTENANCE_MODES.includes(mode))
    throw new CliError(`--mode is one of ${MAINTENANCE_MODES.join(', ')}`);
  const message = (flags.message as string | undefined) ?? null;
  if (message !== null && (message.length === 0 || message.length > MAX_MESSAGE || /\p{Cc}/u.test(message)))
    throw new CliError(`--message is 1..${MAX_MESSAGE} printable characters`);
  const retryAfter = (flags['retry-after'] as number | undefined) ?? null;
  if (retryAfter !== null && (retryAfter < 1 || retryAfter > 86_400))
    throw new CliError('--retry-after is 1..86400 seconds');
  const debugFor = flags['debug-for'] as string | undefined;
  if ((debugFor !== undefined) !== (mode === 'debug'))
    throw new CliError('--debug-for is given exactly with --mode debug');
  const debugMs = debugFor === undefined ? null : parseDuration(debugFor);
  if (debugMs !== null && (debugMs <= 0 || debugMs > MAX_DEBUG_MS))
    throw new CliError('--debug-for is at most 24h');
  const component = (flags['debug-component'] as string | undefined) ?? null;
  if (component !== null && (mode !== 'debug' || !/^[a-z][a-z0-9_.-]{0,63}$/.test(component)))
    throw new CliError('--debug-component is a lower-case name, with --mode debug');
  return withCliContext(flags, async (ctx) => {
    const now = ctx.clock.now();
    const next = await setMaintenance(
      ctx.db,
      {
        mode,
        message: mode === 'off' ? null : message,
        retryAfterSeconds: mode === 'off' ? null : retryAfter,
        debugUntil: debugMs === null ? null : new Date(now.getTime() + debugMs),
        debugComponent: component,
      },
      OPERATOR_ACTOR,
      (flags.by as string | undefined) ?? 'identity-cli',
      now,
    );
    return presentMaintenance(next, now);
  });
}
