// The body reader of the headless start. Start fields cut malformed text instead of failing the
// start (spec doc 1, start-field length handling), so before the strict JSON reader runs this one
// drops what is not text: byte sequences that are not UTF-8 and \u escapes of unpaired UTF-16
// surrogates. Neither can form JSON structure, so strictness (duplicates, depth, unknown members)
// is unchanged.
import { isUtf8 } from 'node:buffer';
import type { FastifyInstance } from 'fastify';
import { checkCharset } from '../platform/http/json-body.ts';
import { parseStrictJson } from '../platform/http/strict-json.ts';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Length of the well-formed UTF-8 sequence at i (RFC 3629 section 4), or 0. */
function sequenceLength(b: Uint8Array, i: number): number {
  const c = b[i] as number;
  if (c < 0x80) return 1;
  const [n, lo, hi] =
    c >= 0xc2 && c <= 0xdf
      ? [2, 0x80, 0xbf]
      : c === 0xe0
        ? [3, 0xa0, 0xbf]
        : c === 0xed
          ? [3, 0x80, 0x9f] // no encoded surrogates
          : c >= 0xe1 && c <= 0xef
            ? [3, 0x80, 0xbf]
            : c === 0xf0
              ? [4, 0x90, 0xbf]
              : c >= 0xf1 && c <= 0xf3
                ? [4, 0x80, 0xbf]
                : c === 0xf4
                  ? [4, 0x80, 0x8f]
                  : [0, 0, 0];
  if (n === 0 || i + n > b.length) return 0;
  const second = b[i + 1] as number;
  if (second < lo || second > hi) return 0;
  for (let k = 2; k < n; k++) {
    const x = b[i + k] as number;
    if (x < 0x80 || x > 0xbf) return 0;
  }
  return n;
}

export function decodeUtf8DroppingInvalid(b: Uint8Array): string {
  if (isUtf8(b)) return utf8.decode(b);
  const kept: number[] = [];
  for (let i = 0; i < b.length; ) {
    const n = sequenceLength(b, i);
    if (n === 0) {
      i++;
      continue;
    }
    for (let k = 0; k < n; k++) kept.push(b[i + k] as number);
    i += n;
  }
  return utf8.decode(Uint8Array.from(kept));
}

const hex4 = (s: string, at: number): number =>
  /^[0-9a-fA-F]{4}$/.test(s.slice(at, at + 4)) ? Number.parseInt(s.slice(at, at + 4), 16) : -1;
const isHigh = (u: number) => u >= 0xd800 && u <= 0xdbff;
const isLow = (u: number) => u >= 0xdc00 && u <= 0xdfff;

/** Removes `\uXXXX` escapes of unpaired surrogates inside JSON strings; everything else is kept. */
export function dropLoneSurrogateEscapes(text: string): string {
  let out = '';
  let run = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (!inString) {
      if (c === '"') inString = true;
      continue;
    }
    if (c === '"') {
      inString = false;
      continue;
    }
    if (c !== '\\') continue;
    if (text[i + 1] !== 'u') {
      i++; // a two-character escape such as \" or \\
      continue;
    }
    const unit = hex4(text, i + 2);
    if (isHigh(unit) && text[i + 6] === '\\' && text[i + 7] === 'u' && isLow(hex4(text, i + 8))) {
      i += 11; // a pair: keep both escapes
      continue;
    }
    if (isHigh(unit) || isLow(unit)) {
      out += text.slice(run, i);
      run = i + 6;
    }
    i += 5;
  }
  return out + text.slice(run);
}

/** Replaces the JSON reader in an encapsulated scope that holds only the start route. */
export function useStartBodyReader(scope: FastifyInstance): void {
  scope.removeContentTypeParser('application/json');
  scope.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, raw, done) => {
    try {
      checkCharset(req.headers['content-type']);
      done(null, parseStrictJson(dropLoneSurrogateEscapes(decodeUtf8DroppingInvalid(raw as Buffer))));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
}
