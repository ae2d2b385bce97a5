// The languages of what the service shows people (the built-in login UI, its error pages, mail):
// English and German. A request's language is the first supported tag of its ui_locales (OpenID
// Connect Core 3.1.2.1), else of its Accept-Language, else English.

export const UI_LOCALES = ['en', 'de'] as const;
export type UiLocale = (typeof UI_LOCALES)[number];

const isUiLocale = (tag: string): tag is UiLocale => (UI_LOCALES as readonly string[]).includes(tag);

/**
 * The first supported language of a space-separated ui_locales list, then of an Accept-Language
 * header (its tags in order of quality; `q=0` means not acceptable), else English.
 */
export function pickUiLocale(uiLocales: string | null | undefined, acceptLanguage?: string | null): UiLocale {
  for (const tag of (uiLocales ?? '').split(/\s+/)) {
    const lang = tag.split('-')[0]?.toLowerCase() ?? '';
    if (isUiLocale(lang)) return lang;
  }
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([01](?:\.\d{0,3})?)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { lang: tag.trim().split('-')[0]?.toLowerCase() ?? '', q: q === undefined ? 1 : Number(q), i };
    })
    .filter((r) => r.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  return ranked.map((r) => r.lang).find(isUiLocale) ?? 'en';
}
