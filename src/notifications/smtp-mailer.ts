// Mail through SMTP with nodemailer (settings delivery.smtp_*). The password arrives resolved
// from its key reference; it is never logged, and nodemailer's own logger stays off.
import nodemailer, { type Transporter } from 'nodemailer';
import { type Mailer, type MailMessage, PermanentDeliveryError } from './mailer.ts';

export interface SmtpOptions {
  host: string;
  port: number;
  tls: 'starttls' | 'implicit' | 'none';
  username: string | null;
  password: string | null;
  from: string;
  /** Per-connection timeouts in milliseconds. */
  timeoutMs?: number;
}

export class SmtpMailer implements Mailer {
  readonly #transport: Transporter;
  readonly #from: string;

  constructor(o: SmtpOptions) {
    const timeout = o.timeoutMs ?? 15_000;
    this.#from = o.from;
    this.#transport = nodemailer.createTransport({
      host: o.host,
      port: o.port,
      secure: o.tls === 'implicit',
      requireTLS: o.tls === 'starttls',
      ignoreTLS: o.tls === 'none',
      ...(o.username ? { auth: { user: o.username, pass: o.password ?? '' } } : {}),
      connectionTimeout: timeout,
      greetingTimeout: timeout,
      socketTimeout: timeout,
      logger: false,
      debug: false,
    });
  }

  async send(m: MailMessage): Promise<void> {
    try {
      await this.#transport.sendMail({
        from: this.#from,
        to: m.to,
        subject: m.subject,
        text: m.text,
        html: m.html,
      });
    } catch (e) {
      // 5xx replies (unknown mailbox, policy rejection) do not heal by retrying.
      const code = (e as { responseCode?: number }).responseCode;
      if (typeof code === 'number' && code >= 500 && code < 600)
        throw new PermanentDeliveryError(`smtp rejected the message (${code})`);
      throw new Error(`smtp delivery failed: ${(e as { code?: string }).code ?? 'error'}`);
    }
  }

  async close(): Promise<void> {
    this.#transport.close();
  }
}
