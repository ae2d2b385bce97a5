// Which outbound channels the configuration provides; sign-in offers emailed codes, magic links
// and SMS codes only when their channel exists (spec doc 1, evaluation order step 2).
import type { Config } from '../platform/config/settings.ts';

type DeliveryConfig = Pick<Config['delivery'], 'smtpHost' | 'mailDir' | 'smsUrl' | 'smsDevSink'>;

export const emailConfigured = (d: DeliveryConfig): boolean => d.smtpHost !== null || d.mailDir !== null;

export const smsConfigured = (d: DeliveryConfig): boolean => d.smsUrl !== null || d.smsDevSink;
