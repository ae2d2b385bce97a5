// The HTML page a browser sees when the authorization or logout endpoint cannot send it back to
// the client (decision D25: unknown client, unregistered redirect URI, unknown realm, a malformed
// request): the login UI's look, the request's language (ui_locales, then Accept-Language;
// English and German), the problem code and the request id to quote. Callers that ask for JSON
// keep the problem document. The page has no script; its one inline style block is allowed by its
// hash, and every value in it is escaped.
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { escapeHtml } from '../kernel/text.ts';
import { pickUiLocale, type UiLocale } from '../kernel/ui-locales.ts';
import type { Problem } from '../platform/http/problem.ts';
import { sendProblem, toProblem } from '../platform/http/problem-mapper.ts';
import type { Logger } from '../platform/log.ts';

export type ErrorPagePurpose = 'authorize' | 'logout';

type Kind = 'invalid' | 'not_found' | 'busy' | 'broken';

interface Texts {
  title: Record<ErrorPagePurpose, string>;
  heading: Record<Kind, string>;
  advice: Record<ErrorPagePurpose, string>;
  code: string;
  requestId: string;
  details: string;
}

const TEXTS: Record<UiLocale, Texts> = {
  en: {
    title: { authorize: 'Sign-in error', logout: 'Sign-out error' },
    heading: {
      invalid: 'The application sent a request that cannot be used',
      not_found: 'This address does not exist',
      busy: 'The service is busy or unavailable',
      broken: 'Something went wrong on our side',
    },
    advice: {
      authorize:
        'You cannot be sent back to the application from here. Go back to the application and start again. If this keeps happening, give its support the details below.',
      logout:
        'The sign-out could not be completed, and you cannot be sent back to the application from here. Go back to the application and try again. If this keeps happening, give its support the details below.',
    },
    code: 'Error code',
    requestId: 'Request ID',
    details: 'Details',
  },
  de: {
    title: { authorize: 'Fehler bei der Anmeldung', logout: 'Fehler bei der Abmeldung' },
    heading: {
      invalid: 'Die Anwendung hat eine Anfrage gesendet, die nicht verwendet werden kann',
      not_found: 'Diese Adresse gibt es nicht',
      busy: 'Der Dienst ist ausgelastet oder nicht erreichbar',
      broken: 'Bei uns ist etwas schiefgelaufen',
    },
    advice: {
      authorize:
        'Von hier aus können Sie nicht zur Anwendung zurückgeleitet werden. Kehren Sie zur Anwendung zurück und beginnen Sie erneut. Wenn das wieder passiert, geben Sie dem Support der Anwendung die folgenden Angaben.',
      logout:
        'Die Abmeldung konnte nicht abgeschlossen werden, und von hier aus können Sie nicht zur Anwendung zurückgeleitet werden. Kehren Sie zur Anwendung zurück und versuchen Sie es erneut. Wenn das wieder passiert, geben Sie dem Support der Anwendung die folgenden Angaben.',
    },
    code: 'Fehlercode',
    requestId: 'Anfrage-ID',
    details: 'Einzelheiten',
  },
};

// The login UI's palette and card (ui/style.css), light and dark, with system fonts.
const STYLE = `:root{color-scheme:light dark;--bg:#f4f5f7;--card:#fff;--text:#1c1e21;--muted:#5c6370;--border:#d4d7dd;--danger:#b3261e;font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;font-size:16px;line-height:1.5}
@media (prefers-color-scheme:dark){:root{--bg:#16181c;--card:#22252b;--text:#e8eaed;--muted:#a0a6b0;--border:#3a3f47;--danger:#ff8a80}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--text);min-height:100vh;display:flex;justify-content:center;align-items:flex-start;padding:6vh 1rem}
.card{background:var(--card);border:1px solid var(--border);border-radius:12px;padding:2rem;width:100%;max-width:32rem;box-shadow:0 2px 12px rgb(0 0 0 / 6%)}
h1{font-size:1.4rem;margin:0 0 .75rem;color:var(--danger)}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:1.5rem 0 0;font-size:.875rem;color:var(--muted)}
dd{margin:0;overflow-wrap:anywhere}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace}`;

// No script at all, the one style block by its hash, nothing loaded from anywhere.
const CSP = [
  "default-src 'none'",
  `style-src 'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`,
  "img-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const kindOf = (p: Problem): Kind =>
  p.status === 404
    ? 'not_found'
    : p.status === 429 || p.status === 503
      ? 'busy'
      : p.status >= 500
        ? 'broken'
        : 'invalid';

/** The page for a problem, in one language. Every value is escaped. */
export function renderErrorPage(
  p: Problem,
  requestId: string,
  locale: UiLocale,
  purpose: ErrorPagePurpose,
): string {
  const t = TEXTS[locale];
  const error = typeof p.extra?.error === 'string' ? p.extra.error : null;
  const code = error && error !== p.code ? `${p.code} (${error})` : p.code;
  const row = (label: string, value: string) =>
    `<dt>${escapeHtml(label)}</dt><dd><code>${escapeHtml(value)}</code></dd>`;
  return `<!doctype html>
<html lang="${locale}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(t.title[purpose])}</title>
<style>${STYLE}</style>
</head>
<body>
<main class="card" role="alert">
<h1>${escapeHtml(t.heading[kindOf(p)])}</h1>
<p>${escapeHtml(t.advice[purpose])}</p>
<dl>${row(t.code, code)}${row(t.requestId, requestId)}${p.detail ? row(t.details, p.detail) : ''}</dl>
</main>
</body>
</html>
`;
}

/**
 * A browser navigation gets the page: it accepts text/html and names no JSON type. A client that
 * sends `Accept: application/json` (or no Accept header, or only `*\/*`) gets the problem document.
 */
export function wantsHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const types = accept
    .toLowerCase()
    .split(',')
    .map((part) => {
      const [type = '', ...params] = part.trim().split(';');
      const q = params.map((x) => /^\s*q=([\d.]+)\s*$/.exec(x)?.[1]).find((v) => v !== undefined);
      return { type: type.trim(), q: q === undefined ? 1 : Number(q) };
    })
    .filter((t) => t.q > 0);
  const html = types.some((t) => t.type === 'text/html');
  const json = types.some((t) => t.type === 'application/json' || t.type === 'application/problem+json');
  return html && !json;
}

/** The request's ui_locales, from the query or a form body, when given once. */
function uiLocalesOf(req: FastifyRequest): string | null {
  const fromQuery = (req.query as Record<string, unknown> | undefined)?.ui_locales;
  if (typeof fromQuery === 'string') return fromQuery;
  const form = req.body instanceof URLSearchParams ? req.body.getAll('ui_locales') : [];
  return form.length === 1 ? (form[0] as string) : null;
}

function sendErrorPage(req: FastifyRequest, reply: FastifyReply, p: Problem, purpose: ErrorPagePurpose) {
  const accept = req.headers['accept-language'];
  const locale = pickUiLocale(uiLocalesOf(req), typeof accept === 'string' ? accept : null);
  if (p.headers) reply.headers(p.headers);
  return reply
    .code(p.status)
    .headers({
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
      'content-language': locale,
      vary: 'Accept, Accept-Language',
    })
    .type('text/html; charset=utf-8')
    .send(renderErrorPage(p, String(req.id), locale, purpose));
}

/**
 * Errors of the routes in `scope` become the HTML page for browsers and stay problem documents
 * for everyone else (the same Problem either way, platform/http/problem-mapper.ts).
 */
export function useBrowserErrorPages(scope: FastifyInstance, log: Logger, purpose: ErrorPagePurpose): void {
  scope.setErrorHandler((err, req, reply) => {
    const p = toProblem(err, log, String(req.id), req.routeOptions.bodyLimit);
    if (wantsHtml(req.headers.accept)) return sendErrorPage(req, reply, p, purpose);
    return sendProblem(reply, p);
  });
}
