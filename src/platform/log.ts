// Structured logs. Secrets never reach a log line: known sensitive members are redacted at source.
import pino, { type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'proudauth' },
      redact: {
        paths: [
          'req.headers.authorization',
          'req.headers.cookie',
          'req.headers["x-transaction-token"]',
          'req.headers["x-csrf-token"]',
          '*.password',
          '*.client_secret',
          '*.token',
          '*.secret',
        ],
        censor: '[redacted]',
      },
    },
    destination as pino.DestinationStream | undefined,
  );
}
