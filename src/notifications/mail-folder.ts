// proudauth dev's mail transport: every message becomes an .eml file in a folder under the data
// directory, and the code or link it carries is announced on the terminal, so a developer can
// register and sign in without a mail server.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Mailer, MailMessage } from './mailer.ts';

const header = (v: string) => v.replace(/[\r\n]+/g, ' ');

export class MailFolder implements Mailer {
  readonly #dir: string;
  readonly #from: string;
  readonly #announce: (line: string) => void;
  #n = 0;

  constructor(dir: string, from: string, announce: (line: string) => void) {
    this.#dir = dir;
    this.#from = from;
    this.#announce = announce;
  }

  async send(m: MailMessage): Promise<void> {
    await mkdir(this.#dir, { recursive: true, mode: 0o700 });
    const stamp = new Date().toISOString().replace(/[:.]/g, '-');
    const file = join(this.#dir, `${stamp}-${String(++this.#n).padStart(4, '0')}.eml`);
    const boundary = `pa-${Date.now().toString(36)}`;
    const eml = [
      `From: ${header(this.#from)}`,
      `To: ${header(m.to)}`,
      `Subject: ${header(m.subject)}`,
      'MIME-Version: 1.0',
      `Content-Type: multipart/alternative; boundary="${boundary}"`,
      '',
      `--${boundary}`,
      'Content-Type: text/plain; charset=utf-8',
      '',
      m.text,
      `--${boundary}`,
      'Content-Type: text/html; charset=utf-8',
      '',
      m.html,
      `--${boundary}--`,
      '',
    ].join('\r\n');
    await writeFile(file, eml, { mode: 0o600 });
    this.#announce(`mail to ${m.to}: "${m.subject}"${m.hint ? ` -> ${m.hint}` : ''} (${file})`);
  }
}
