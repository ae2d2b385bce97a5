// What the notification worker hands to a transport: one rendered message. Transports are the SMTP
// client (smtp-mailer.ts), the dev mail folder (mail-folder.ts) and the SMS adapters (sms.ts).

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html: string;
  /** The code or link the message carries; only the dev mail folder shows it (on the terminal). */
  hint?: string;
}

export interface Mailer {
  /** Resolves once the message is accepted; a rejection is retried by the worker. */
  send(message: MailMessage): Promise<void>;
  close?(): Promise<void>;
}

export interface SmsMessage {
  to: string;
  text: string;
  hint?: string;
}

export interface SmsSender {
  send(message: SmsMessage): Promise<void>;
}

/** A failure no retry can fix (rejected recipient, refused destination): the notification fails. */
export class PermanentDeliveryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PermanentDeliveryError';
  }
}
