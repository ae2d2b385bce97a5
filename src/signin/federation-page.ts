// The small page the upstream's callback answers when it does not send the browser on: after a
// headless sign-in (the application reads the state itself), or when the callback cannot go on.
// English and German as the login UI; no script, every value escaped, nothing loaded.
import type { CallbackProblem } from './federation-callback.ts';

type Lang = 'en' | 'de';

const TEXT: Record<Lang, Record<CallbackProblem | 'done' | 'ended' | 'title', string>> = {
  en: {
    title: 'Sign-in',
    done: 'You are signed in with your provider. Go back to the application to continue.',
    ended: 'This sign-in has ended. Go back to the application to see how.',
    unknown_realm: 'This sign-in address is not known.',
    unknown_request: 'This sign-in link was used already or has expired. Start the sign-in again.',
    wrong_connection: 'The answer came from another provider than the one this sign-in went to. Start again.',
    other_browser: 'This sign-in was started in another browser. Finish it there, or start again here.',
    transaction_ended: 'This sign-in has ended or expired. Start the sign-in again.',
  },
  de: {
    title: 'Anmeldung',
    done: 'Sie sind bei Ihrem Anbieter angemeldet. Kehren Sie zur Anwendung zurück, um fortzufahren.',
    ended: 'Diese Anmeldung ist beendet. Die Anwendung zeigt, wie sie ausgegangen ist.',
    unknown_realm: 'Diese Anmeldeadresse ist nicht bekannt.',
    unknown_request:
      'Dieser Anmeldelink wurde schon verwendet oder ist abgelaufen. Starten Sie die Anmeldung neu.',
    wrong_connection:
      'Die Antwort kam von einem anderen Anbieter als dem, zu dem diese Anmeldung ging. Starten Sie neu.',
    other_browser:
      'Diese Anmeldung wurde in einem anderen Browser begonnen. Beenden Sie sie dort oder starten Sie hier neu.',
    transaction_ended: 'Diese Anmeldung ist beendet oder abgelaufen. Starten Sie die Anmeldung neu.',
  },
};

const langOf = (locale: string | null): Lang =>
  (locale ?? '')
    .split(/\s+/)
    .map((l) => l.toLowerCase().split('-')[0])
    .find((l): l is Lang => l === 'en' || l === 'de') ?? 'en';

const escapeHtml = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** The page's HTML; `message` is a key of the texts above. */
export function callbackPage(
  message: CallbackProblem | 'done' | 'ended',
  locale: string | null,
  requestId: string,
): string {
  const lang = langOf(locale);
  const t = TEXT[lang];
  return `<!doctype html>
<html lang="${lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(t.title)}</title></head>
<body><main><h1>${escapeHtml(t.title)}</h1><p data-message="${escapeHtml(message)}">${escapeHtml(t[message])}</p>
<p><small>${escapeHtml(requestId)}</small></p></main></body></html>
`;
}

/** Nothing on the page may load or run anything. */
export const CALLBACK_PAGE_CSP =
  "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
