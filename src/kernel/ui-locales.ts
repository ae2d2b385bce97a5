// The languages of what the service shows people (the built-in login UI, mail): English and German.

export const UI_LOCALES = ['en', 'de'] as const;
