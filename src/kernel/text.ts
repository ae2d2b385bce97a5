// Text that PostgreSQL cannot store: a NUL character fails any statement that carries it as a
// parameter, so request text is checked for it before it reaches a query.
export const hasNul = (s: string): boolean => s.includes('\0');

export const withoutNul = (s: string): string => s.replaceAll('\0', '');

/** For string decoders: the whole value is free of NUL characters. */
export const NO_NUL = /[^\0]*/;

/** Text made safe to place in HTML content and in quoted attribute values. */
export const escapeHtml = (s: string): string =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  );
