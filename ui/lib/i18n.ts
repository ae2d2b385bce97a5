// Texts of the login UI and account page in each supported language. The language is the first
// supported tag of the transaction's ui_locales (or the page's ?ui_locales=), else the browser's,
// else English. A text missing in a language falls back to English.
import { de } from './messages.de.js';
import { en, type MessageKey } from './messages.en.js';

export type { MessageKey };

const CATALOGS: Record<string, Partial<Record<MessageKey, string>>> = { en, de };
export const SUPPORTED = Object.keys(CATALOGS);

let current = 'en';

/** Picks the first supported language of a space-separated list of BCP 47 tags. */
export function pickLocale(...lists: (string | null | undefined)[]): string {
  for (const list of lists) {
    for (const tag of (list ?? '').split(/[\s,]+/)) {
      const base = tag.toLowerCase().split('-')[0] ?? '';
      if (SUPPORTED.includes(base)) return base;
    }
  }
  return 'en';
}

export function setLocale(locale: string): void {
  current = SUPPORTED.includes(locale) ? locale : 'en';
  document.documentElement.lang = current;
}

/** The text for key, with {name} placeholders filled in. */
export function t(key: MessageKey, vars: Record<string, string | number> = {}): string {
  const text = CATALOGS[current]?.[key] ?? en[key];
  return text.replace(/\{(\w+)\}/g, (_, name: string) => String(vars[name] ?? `{${name}}`));
}

/**
 * A wait as the page's language says it ("in 11 minutes", "in 11 Minuten"): whole seconds under a
 * minute, else minutes rounded up, hours from two hours on.
 */
export function inTime(seconds: number): string {
  const words = new Intl.RelativeTimeFormat(current, { numeric: 'always' });
  if (seconds < 60) return words.format(Math.max(1, Math.ceil(seconds)), 'second');
  const minutes = Math.ceil(seconds / 60);
  if (minutes < 120) return words.format(minutes, 'minute');
  return words.format(Math.ceil(minutes / 60), 'hour');
}

/** Plain words for a problem, blocking or failure code; the code itself when none is known. */
export function describeCode(code: string): string {
  const key = `code.${code}` as MessageKey;
  return key in en ? t(key) : t('code.unknown', { code });
}
