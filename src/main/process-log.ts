// The logger of a server process (observability.log_level and log_format). JSON lines go to file
// descriptor 1 in batches (platform/log-sink.ts); lines are only ever written whole, so the single
// write of `proudauth dev`'s banner never lands inside one. The terminal format writes through
// process.stdout as it comes: a person is reading it.
import type { Config } from '../platform/config/settings.ts';
import { createLogger, type LogFormat, type Logger } from '../platform/log.ts';
import { LineSink } from '../platform/log-sink.ts';

export function logFormatFor(config: Config, command: string, stdoutIsTty: boolean): LogFormat {
  const setting = config.observability.logFormat;
  if (setting !== 'auto') return setting;
  return command === 'dev' && stdoutIsTty ? 'pretty' : 'json';
}

export function processLogger(config: Config, command: string): Logger {
  const format = logFormatFor(config, command, process.stdout.isTTY === true);
  if (format === 'pretty') return createLogger(config.observability.logLevel, process.stdout, format);
  return createLogger(config.observability.logLevel, new LineSink(process.stdout.fd), format);
}
