// SMS adapters. The real one POSTs signed JSON to the operator's gateway URL (delivery.sms_url)
// through the shared egress-guarded outbound HTTP client; the dev sink prints the message on the
// terminal (proudauth dev). Signature: header X-ProudAuth-Signature `v1=<hex HMAC-SHA256>` over
// `<X-ProudAuth-Timestamp>.<body>` with the key delivery.sms_signing_key.
import { createHmac, randomUUID } from 'node:crypto';
import type { EgressGuard } from '../platform/net/egress-guard.ts';
import type { OutboundHttp } from '../platform/net/outbound-http.ts';
import { PermanentDeliveryError, type SmsMessage, type SmsSender } from './mailer.ts';

export interface HttpSmsOptions {
  url: string;
  key: Buffer;
  http: OutboundHttp;
  guard: EgressGuard;
  timeoutMs: number;
  now?: () => Date;
}

export const smsSignature = (key: Buffer, timestamp: string, body: string): string =>
  `v1=${createHmac('sha256', key).update(`${timestamp}.${body}`).digest('hex')}`;

export class HttpSms implements SmsSender {
  readonly #o: HttpSmsOptions;

  constructor(o: HttpSmsOptions) {
    this.#o = o;
  }

  async send(m: SmsMessage): Promise<void> {
    const timestamp = String(Math.floor((this.#o.now?.() ?? new Date()).getTime() / 1000));
    const id = randomUUID();
    const body = JSON.stringify({ id, to: m.to, text: m.text });
    const r = await this.#o.http.post({
      url: this.#o.url,
      headers: {
        'content-type': 'application/json',
        'x-proudauth-id': id,
        'x-proudauth-timestamp': timestamp,
        'x-proudauth-signature': smsSignature(this.#o.key, timestamp, body),
      },
      body,
      guard: this.#o.guard,
      timeoutMs: this.#o.timeoutMs,
      maxResponseBytes: 64 * 1024,
    });
    switch (r.kind) {
      case 'response':
        if (r.status >= 200 && r.status < 300) return;
        // A refusal of the message itself (bad number, rejected content) does not heal by retrying.
        if (r.status >= 400 && r.status < 500 && r.status !== 408 && r.status !== 429)
          throw new PermanentDeliveryError(`sms gateway refused the message (${r.status})`);
        throw new Error(`sms gateway answered ${r.status}`);
      case 'egress_denied':
        throw new PermanentDeliveryError(`egress_denied: ${r.reason}`);
      case 'timeout':
        throw new Error('sms gateway timed out');
      case 'network_error':
        throw new Error(`sms gateway unreachable (${r.code})`);
    }
  }
}

/** proudauth dev: the message and its code on the terminal, nothing sent. */
export class SmsTerminalSink implements SmsSender {
  readonly #announce: (line: string) => void;
  constructor(announce: (line: string) => void) {
    this.#announce = announce;
  }
  async send(m: SmsMessage): Promise<void> {
    this.#announce(`sms to ${m.to}: "${m.text}"${m.hint ? ` -> ${m.hint}` : ''}`);
  }
}
