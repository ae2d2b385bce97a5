// A local HTTP receiver standing in for an operator's SMS gateway: it keeps every request with its
// headers and JSON body, so a test checks the signature and reads the code.
import { createServer } from 'node:http';
import type { TestContext } from 'node:test';

export interface ReceivedSms {
  headers: Record<string, string | string[] | undefined>;
  raw: string;
  body: { id: string; to: string; text: string };
}

export interface SmsReceiver {
  url: string;
  received: ReceivedSms[];
  /** Settings that send the service's SMS here (the key is a literal, as test settings may be). */
  overrides: Record<string, unknown>;
  /** Answer the next requests with this status instead of 200. */
  failWith: number[];
}

export const SMS_TEST_KEY = 'test-sms-signing-key';

export async function startSmsReceiver(t: TestContext, allowLoopback = true): Promise<SmsReceiver> {
  const received: ReceivedSms[] = [];
  const failWith: number[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => {
      raw += c.toString('utf8');
    });
    req.on('end', () => {
      received.push({ headers: req.headers, raw, body: JSON.parse(raw) });
      res.statusCode = failWith.shift() ?? 200;
      res.end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('sms receiver not listening');
  const url = `http://127.0.0.1:${address.port}/sms`;
  return {
    url,
    received,
    failWith,
    overrides: {
      'delivery.sms_url': url,
      'delivery.sms_signing_key': SMS_TEST_KEY,
      ...(allowLoopback ? { 'delivery.egress_allowlist': '127.0.0.1/32' } : {}),
    },
  };
}

export function smsCode(sms: ReceivedSms): string {
  const m = /\b(\d{6})\b/.exec(sms.body.text);
  if (!m?.[1]) throw new Error(`no code in "${sms.body.text}"`);
  return m[1];
}
