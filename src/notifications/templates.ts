// Message templates per locale (English and German), each rendered to plain text and HTML. The
// locale comes from the transaction's ui_locales: the first tag whose language we have wins.

export type TemplateName =
  | 'login_code'
  | 'magic_link'
  | 'verify_email'
  | 'password_reset'
  | 'account_exists'
  | 'invitation'
  | 'join_request_decision'
  | 'sms_code'
  | 'recovery_scheduled'
  | 'recovery_setup'
  | 'new_sign_in'
  | 'factor_changed'
  | 'workflow_message';

export type Locale = 'en' | 'de';

export interface TemplateVars {
  realm: string;
  code?: string;
  link?: string;
  minutes?: number;
  organization?: string;
  decision?: 'approved' | 'denied';
  /** A point in time, already written for the reader (UTC). */
  when?: string;
  hours?: number;
  /** new_sign_in: the browser or app as its user agent names it, and when (UTC). */
  device?: string;
  time?: string;
  /** factor_changed: which factor, and whether it was added or removed. */
  factor?: 'totp' | 'hotp' | 'webauthn';
  change?: 'added' | 'removed';
  /** workflow_message: the subject and text an administrator wrote in a workflow's send_mail step. */
  subject?: string;
  message?: string;
}

const FACTOR_EN = { totp: 'An authenticator app', hotp: 'An HOTP token', webauthn: 'A passkey' } as const;
const FACTOR_DE = {
  totp: 'Eine Authenticator-App',
  hotp: 'Ein HOTP-Token',
  webauthn: 'Ein Passkey',
} as const;

interface Text {
  subject: string;
  lines: string[];
}

type Render = (v: TemplateVars) => Text;

/** An administrator's own words, the same in every locale. */
const workflowMessage: Render = (v) => ({ subject: v.subject ?? v.realm, lines: [v.message ?? ''] });

const en: Record<TemplateName, Render> = {
  login_code: (v) => ({
    subject: `Your sign-in code for ${v.realm}`,
    lines: [
      `Your sign-in code is ${v.code}.`,
      `It expires in ${v.minutes} minutes. If you did not try to sign in, ignore this message.`,
    ],
  }),
  magic_link: (v) => ({
    subject: `Sign in to ${v.realm}`,
    lines: [
      `Open this link in the browser where you started to sign in:`,
      `${v.link}`,
      `It expires in ${v.minutes} minutes.`,
    ],
  }),
  verify_email: (v) => ({
    subject: `Confirm your email address for ${v.realm}`,
    lines: [`Your confirmation code is ${v.code}.`, `It expires in ${v.minutes} minutes.`],
  }),
  password_reset: (v) => ({
    subject: `Reset your password for ${v.realm}`,
    lines: [
      `Your password reset code is ${v.code}.`,
      `It expires in ${v.minutes} minutes. If you did not ask for it, ignore this message; your password stays unchanged.`,
    ],
  }),
  account_exists: (v) => ({
    subject: `Someone tried to register with your address at ${v.realm}`,
    lines: [
      `Someone asked to create an account at ${v.realm} with this email address, which already has one, so no new account was made.`,
      `If it was you, sign in with your existing account, or reset your password from the sign-in page if you forgot it. If it was not you, ignore this message; your account is unchanged.`,
    ],
  }),
  invitation: (v) => ({
    subject: `You are invited to ${v.organization} on ${v.realm}`,
    lines: [
      `You were invited to join ${v.organization}.`,
      `Sign in to ${v.realm} with this address to accept the invitation.`,
    ],
  }),
  join_request_decision: (v) => ({
    subject: `Your request to join ${v.organization}`,
    lines: [
      v.decision === 'approved'
        ? `Your request to join ${v.organization} was approved.`
        : `Your request to join ${v.organization} was declined.`,
    ],
  }),
  sms_code: (v) => ({
    subject: '',
    lines: [`${v.code} is your ${v.realm} code. It expires in ${v.minutes} minutes.`],
  }),
  recovery_scheduled: (v) => ({
    subject: `Recovery of your ${v.realm} account was requested`,
    lines: [
      `A support operator asked to recover your ${v.realm} account. Unless it is cancelled, your sessions end and a link to set a new password comes to this address from ${v.when}.`,
      `If you did not ask for this, sign in and cancel it under your account's security settings (pending assisted recoveries), or contact your administrator.`,
    ],
  }),
  recovery_setup: (v) => ({
    subject: `Set up your ${v.realm} account again`,
    lines: [
      `Your ${v.realm} account was recovered. Open this link to choose a new password:`,
      `${v.link}`,
      `The link works once and expires in ${v.hours} hours. At your next sign-in you set up an authenticator app.`,
    ],
  }),
  new_sign_in: (v) => ({
    subject: `New sign-in to your ${v.realm} account`,
    lines: [
      `Your account was signed in to from a device it had not used before, at ${v.time} (UTC).`,
      `Device: ${v.device}`,
      `If this was you, nothing needs doing. If not, change your password at once and review your account's sessions and factors.`,
    ],
  }),
  factor_changed: (v) => ({
    subject: `A sign-in factor of your ${v.realm} account changed`,
    lines: [
      `${FACTOR_EN[v.factor ?? 'totp']} was ${v.change === 'removed' ? 'removed from' : 'added to'} your account.`,
      `If this was you, nothing needs doing. If not, change your password at once and review your account's factors.`,
    ],
  }),
  workflow_message: (v) => workflowMessage(v),
};

const de: Record<TemplateName, Render> = {
  login_code: (v) => ({
    subject: `Ihr Anmeldecode für ${v.realm}`,
    lines: [
      `Ihr Anmeldecode lautet ${v.code}.`,
      `Er läuft in ${v.minutes} Minuten ab. Falls Sie sich nicht anmelden wollten, ignorieren Sie diese Nachricht.`,
    ],
  }),
  magic_link: (v) => ({
    subject: `Anmelden bei ${v.realm}`,
    lines: [
      `Öffnen Sie diesen Link in dem Browser, in dem Sie die Anmeldung begonnen haben:`,
      `${v.link}`,
      `Er läuft in ${v.minutes} Minuten ab.`,
    ],
  }),
  verify_email: (v) => ({
    subject: `Bestätigen Sie Ihre E-Mail-Adresse für ${v.realm}`,
    lines: [`Ihr Bestätigungscode lautet ${v.code}.`, `Er läuft in ${v.minutes} Minuten ab.`],
  }),
  password_reset: (v) => ({
    subject: `Passwort zurücksetzen für ${v.realm}`,
    lines: [
      `Ihr Code zum Zurücksetzen des Passworts lautet ${v.code}.`,
      `Er läuft in ${v.minutes} Minuten ab. Falls Sie ihn nicht angefordert haben, ignorieren Sie diese Nachricht; Ihr Passwort bleibt unverändert.`,
    ],
  }),
  account_exists: (v) => ({
    subject: `Registrierungsversuch mit Ihrer Adresse bei ${v.realm}`,
    lines: [
      `Jemand wollte bei ${v.realm} ein Konto mit dieser E-Mail-Adresse anlegen. Zu ihr gibt es bereits ein Konto, daher wurde kein neues angelegt.`,
      `Falls Sie das waren, melden Sie sich mit Ihrem bestehenden Konto an oder setzen Sie auf der Anmeldeseite Ihr Passwort zurück, falls Sie es vergessen haben. Falls nicht, ignorieren Sie diese Nachricht; Ihr Konto bleibt unverändert.`,
    ],
  }),
  invitation: (v) => ({
    subject: `Einladung zu ${v.organization} bei ${v.realm}`,
    lines: [
      `Sie wurden eingeladen, ${v.organization} beizutreten.`,
      `Melden Sie sich mit dieser Adresse bei ${v.realm} an, um die Einladung anzunehmen.`,
    ],
  }),
  join_request_decision: (v) => ({
    subject: `Ihre Anfrage, ${v.organization} beizutreten`,
    lines: [
      v.decision === 'approved'
        ? `Ihre Anfrage, ${v.organization} beizutreten, wurde angenommen.`
        : `Ihre Anfrage, ${v.organization} beizutreten, wurde abgelehnt.`,
    ],
  }),
  sms_code: (v) => ({
    subject: '',
    lines: [`${v.code} ist Ihr ${v.realm}-Code. Er läuft in ${v.minutes} Minuten ab.`],
  }),
  recovery_scheduled: (v) => ({
    subject: `Wiederherstellung Ihres Kontos bei ${v.realm} angefordert`,
    lines: [
      `Ein Support-Mitarbeiter hat die Wiederherstellung Ihres Kontos bei ${v.realm} angefordert. Wird sie nicht abgebrochen, enden Ihre Sitzungen ab ${v.when}, und an diese Adresse geht ein Link, mit dem Sie ein neues Passwort festlegen.`,
      `Falls Sie das nicht veranlasst haben, melden Sie sich an und brechen Sie die Wiederherstellung in den Sicherheitseinstellungen Ihres Kontos ab (ausstehende Wiederherstellungen), oder wenden Sie sich an Ihre Administration.`,
    ],
  }),
  recovery_setup: (v) => ({
    subject: `Richten Sie Ihr Konto bei ${v.realm} neu ein`,
    lines: [
      `Ihr Konto bei ${v.realm} wurde wiederhergestellt. Öffnen Sie diesen Link, um ein neues Passwort festzulegen:`,
      `${v.link}`,
      `Der Link gilt einmal und läuft in ${v.hours} Stunden ab. Bei der nächsten Anmeldung richten Sie eine Authenticator-App ein.`,
    ],
  }),
  new_sign_in: (v) => ({
    subject: `Neue Anmeldung bei Ihrem Konto bei ${v.realm}`,
    lines: [
      `Bei Ihrem Konto wurde sich am ${v.time} (UTC) von einem Gerät angemeldet, das es bisher nicht benutzt hat.`,
      `Gerät: ${v.device}`,
      `Falls Sie das waren, ist nichts zu tun. Falls nicht, ändern Sie sofort Ihr Passwort und prüfen Sie die Sitzungen und Faktoren Ihres Kontos.`,
    ],
  }),
  factor_changed: (v) => ({
    subject: `Ein Anmeldefaktor Ihres Kontos bei ${v.realm} wurde geändert`,
    lines: [
      `${FACTOR_DE[v.factor ?? 'totp']} wurde ${v.change === 'removed' ? 'aus Ihrem Konto entfernt' : 'Ihrem Konto hinzugefügt'}.`,
      `Falls Sie das waren, ist nichts zu tun. Falls nicht, ändern Sie sofort Ihr Passwort und prüfen Sie die Faktoren Ihres Kontos.`,
    ],
  }),
  workflow_message: (v) => workflowMessage(v),
};

const LOCALES: Record<Locale, Record<TemplateName, Render>> = { en, de };

/** The first ui_locales tag we have a template language for; English otherwise. */
export function localeOf(uiLocales: string | null | undefined): Locale {
  for (const tag of (uiLocales ?? '').split(/\s+/)) {
    const lang = tag.split('-')[0]?.toLowerCase();
    if (lang === 'de' || lang === 'en') return lang;
  }
  return 'en';
}

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );

export interface Rendered {
  subject: string;
  text: string;
  html: string;
}

export function render(name: TemplateName, locale: Locale, vars: TemplateVars): Rendered {
  const t = LOCALES[locale][name](vars);
  const text = `${t.lines.join('\n\n')}\n\n-- \n${vars.realm}\n`;
  const para = (line: string) =>
    vars.link && line === vars.link
      ? `<p><a href="${escapeHtml(line)}">${escapeHtml(line)}</a></p>`
      : `<p>${escapeHtml(line)}</p>`;
  const html = `<!doctype html><html lang="${locale}"><body>${t.lines.map(para).join('')}<p style="color:#666">${escapeHtml(vars.realm)}</p></body></html>`;
  return { subject: t.subject, text, html };
}
