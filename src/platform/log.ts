// Structured logs. Secrets never reach a log line: known sensitive members are redacted at source,
// before either output format (JSON or the terminal one in log-pretty.ts) sees the line.
import pino, { type Logger } from 'pino';
import { prettyStream } from './log-pretty.ts';

export type { Logger };

/** json: one JSON object per line (collectors); pretty: one human line per entry (a terminal). */
export type LogFormat = 'json' | 'pretty';

// Members that hold a credential or personal data wherever they appear, top level or one deep.
const SENSITIVE = [
  'password',
  'new_password',
  'client_secret',
  'client_assertion',
  'code_verifier',
  'token',
  'access_token',
  'refresh_token',
  'id_token',
  'continuation_token',
  'secret',
  'email',
  'authorization',
  'cookie',
];

export function createLogger(
  level: string,
  destination?: NodeJS.WritableStream,
  format: LogFormat = 'json',
): Logger {
  const sink = format === 'pretty' ? prettyStream(destination ?? process.stdout) : destination;
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
          ...SENSITIVE,
          ...SENSITIVE.map((k) => `*.${k}`),
        ],
        censor: '[redacted]',
      },
    },
    sink as pino.DestinationStream | undefined,
  );
}
