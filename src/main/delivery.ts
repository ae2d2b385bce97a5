// Builds the outbound transports from the delivery.* settings: SMTP when delivery.smtp_host is set,
// else the mail folder when delivery.mail_dir is set (proudauth dev), else none; the SMS adapter
// when delivery.sms_url is set. Credentials are key references resolved here, once.
import { resolve } from 'node:path';
import { type Mailer, MailFolder, type SmsSender, SmtpMailer } from '../notifications/index.ts';
import type { Config } from '../platform/config/settings.ts';
import { resolveToken } from '../platform/crypto/secret-ref.ts';

const secret = (config: Config, env: NodeJS.ProcessEnv, ref: string, what: string) =>
  resolveToken(ref, { env, environment: config.environment, kms: config.keys.kms, what });

export async function buildMailer(
  config: Config,
  env: NodeJS.ProcessEnv,
  announce: (line: string) => void,
): Promise<Mailer | null> {
  const d = config.delivery;
  if (d.smtpHost) {
    const password = d.smtpPassword
      ? await secret(config, env, d.smtpPassword, 'delivery.smtp_password')
      : null;
    return new SmtpMailer({
      host: d.smtpHost,
      port: d.smtpPort,
      tls: d.smtpTls,
      username: d.smtpUsername,
      password,
      from: d.mailFrom,
    });
  }
  if (d.mailDir) return new MailFolder(resolve(d.mailDir), d.mailFrom, announce);
  return null;
}

export async function buildSmsSender(_config: Config, _env: NodeJS.ProcessEnv): Promise<SmsSender | null> {
  return null;
}
