// The notifications context's public surface: queue a message in the caller's transaction, the
// transports, and the worker tasks. Other folders never import notifications.repo.ts.
export { emailConfigured, smsConfigured } from './capabilities.ts';
export { enqueueNotification, type NotificationRequest } from './enqueue.ts';
export { MailFolder } from './mail-folder.ts';
export type { Mailer, MailMessage, SmsMessage, SmsSender } from './mailer.ts';
export { PermanentDeliveryError } from './mailer.ts';
export {
  type DeliveryOutcome,
  MAX_NOTIFICATION_ATTEMPTS,
  type NotificationDeps,
  NotificationSender,
  notificationRetryDelayMs,
} from './notification-sender.ts';
export { oldestDueSeconds } from './notifications.repo.ts';
export {
  cleanupNotifications,
  type NotificationCleanupDeps,
  sendNotificationsTask,
} from './notifications.task.ts';
export { HttpSms, type HttpSmsOptions, SmsTerminalSink, smsSignature } from './sms.ts';
export { SmtpMailer, type SmtpOptions } from './smtp-mailer.ts';
export { type Locale, localeOf, render, type TemplateName, type TemplateVars } from './templates.ts';
