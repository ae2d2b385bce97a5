// The logger of a server process (observability.log_level and log_format). Lines go to stdout
// through process.stdout itself, the stream `proudauth dev` writes its banner to in one write, so
// a log line can come before or after the banner but never inside it.
import type { Config } from '../platform/config/settings.ts';
import { createLogger, type LogFormat, type Logger } from '../platform/log.ts';

export function logFormatFor(config: Config, command: string, stdoutIsTty: boolean): LogFormat {
  const setting = config.observability.logFormat;
  if (setting !== 'auto') return setting;
  return command === 'dev' && stdoutIsTty ? 'pretty' : 'json';
}

export function processLogger(config: Config, command: string): Logger {
  const format = logFormatFor(config, command, process.stdout.isTTY === true);
  return createLogger(config.observability.logLevel, process.stdout, format);
}
