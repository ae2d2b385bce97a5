// Builds the outbound transports from the delivery.* settings: SMTP when delivery.smtp_host is set,
// else the mail folder when delivery.mail_dir is set (proudauth dev), else none; the SMS adapter
// (through the egress-guarded outbound client) when delivery.sms_url is set, else the terminal
// sink when delivery.sms_dev_sink is on. Credentials are key references resolved here, once.
import { resolve } from 'node:path';
import {
  HttpSms,
  type Mailer,
  MailFolder,
  type SmsSender,
  SmsTerminalSink,
  SmtpMailer,
} from '../notifications/index.ts';
import type { Config } from '../platform/config/settings.ts';
import { resolveToken } from '../platform/crypto/secret-ref.ts';
import { EgressGuard } from '../platform/net/egress-guard.ts';
import { OutboundHttp } from '../platform/net/outbound-http.ts';

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

export async function buildSmsSender(
  config: Config,
  env: NodeJS.ProcessEnv,
  announce: (line: string) => void,
): Promise<SmsSender | null> {
  const d = config.delivery;
  if (d.smsUrl) {
    if (!d.smsSigningKey)
      throw new Error('delivery.sms_url needs delivery.sms_signing_key (a key reference)');
    const key = Buffer.from(await secret(config, env, d.smsSigningKey, 'delivery.sms_signing_key'), 'utf8');
    return new HttpSms({
      url: d.smsUrl,
      key,
      http: new OutboundHttp(),
      // Private gateways are reached only through delivery.egress_allowlist.
      guard: new EgressGuard({ allowlist: d.egressAllowlist, allowPrivate: false }),
      timeoutMs: d.webhookTimeoutMs,
    });
  }
  if (d.smsDevSink) return new SmsTerminalSink(announce);
  return null;
}
