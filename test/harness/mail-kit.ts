// A real SMTP server for tests (smtp-server) that keeps every message it receives, parsed with
// mailparser, so a test reads the code or link out of the mail the way a user would.
import type { TestContext } from 'node:test';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import { NotificationSender } from '../../src/notifications/index.ts';
import type { Harness } from './harness.ts';

export interface ReceivedMail {
  to: string;
  from: string;
  subject: string;
  text: string;
  html: string;
}

export interface MailSink {
  port: number;
  received: ReceivedMail[];
  /** Settings that send the service's mail here. */
  overrides: Record<string, unknown>;
  /**
   * Waits for the n-th message (1-based) to `to`, of the realm whose display name is given when
   * one is (a test file's tests share a database, so a worker may send another test's mail).
   */
  waitFor(to: string, n?: number, realm?: string): Promise<ReceivedMail>;
}

export async function startMailSink(t: TestContext): Promise<MailSink> {
  const received: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((m) => {
          received.push({
            to: session.envelope.rcptTo.map((r) => r.address).join(','),
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            subject: m.subject ?? '',
            text: m.text ?? '',
            html: typeof m.html === 'string' ? m.html : '',
          });
          callback();
        })
        .catch((e: Error) => callback(e));
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.server.address();
  if (!address || typeof address === 'string') throw new Error('smtp sink not listening');
  const port = address.port;
  return {
    port,
    received,
    overrides: {
      'delivery.smtp_host': '127.0.0.1',
      'delivery.smtp_port': port,
      'delivery.smtp_tls': 'none',
      'delivery.mail_from': 'Test IdP <idp@example.com>',
    },
    async waitFor(to, n = 1, realm) {
      for (let i = 0; i < 200; i++) {
        const mine = received.filter((m) => m.to === to && (!realm || m.text.includes(realm)));
        if (mine.length >= n) return mine[n - 1] as ReceivedMail;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`no mail number ${n} to ${to}; received ${received.length} in all`);
    },
  };
}

/** The six-digit code a message carries. */
export function codeIn(mail: ReceivedMail): string {
  const m = /\b(\d{6})\b/.exec(mail.text);
  if (!m?.[1]) throw new Error(`no code in mail "${mail.subject}"`);
  return m[1];
}

/** The first https or http link of a message's plain text. */
export function linkIn(mail: ReceivedMail): string {
  const m = /(https?:\/\/\S+)/.exec(mail.text);
  if (!m?.[1]) throw new Error(`no link in mail "${mail.subject}"`);
  return m[1];
}

/** Runs one batch of the worker's notification sender over the harness (what notifications.send does). */
export async function deliverQueued(h: Harness): Promise<Record<string, number>> {
  const keyring = h.ctx.keyring;
  if (!keyring) throw new Error('harness has no keyring');
  return new NotificationSender(
    { db: h.ctx.db, keyring, clock: h.ctx.clock, mailer: h.ctx.mailer, sms: h.ctx.sms, tenantBatchShare: 25 },
    'test-worker',
  ).runOnce();
}

/** `otp/send {purpose}` in `tx`, the queue delivered, and the n-th message that reached `to`. */
export async function sendAndReceive(
  h: Harness,
  mail: MailSink,
  tx: { step(path: string, body?: unknown): Promise<{ status: number; body: unknown }> },
  purpose: string,
  o: { to: string; realm: string; n?: number },
): Promise<ReceivedMail> {
  const sent = await tx.step('otp/send', { purpose });
  if (sent.status !== 200)
    throw new Error(`otp/send ${purpose}: ${sent.status} ${JSON.stringify(sent.body)}`);
  await deliverQueued(h);
  return mail.waitFor(o.to, o.n ?? 1, o.realm);
}
