// Byte-bounded text (spec doc 1, "Start-field length handling"): lone surrogates, which cannot be
// encoded as UTF-8, are dropped, and the text is cut at a character boundary within the limit.
export function cutUtf8(s: string, maxBytes: number): string {
  let out = '';
  let bytes = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0) as number;
    if (cp >= 0xd800 && cp <= 0xdfff) continue;
    const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes + n > maxBytes) break;
    out += ch;
    bytes += n;
  }
  return out;
}

export const utf8Length = (s: string): number => Buffer.byteLength(s, 'utf8');
