// Bodies that break one value rule of a decoder, read from the decoder's own spec
// (platform/http/decode.ts): a string one character past its limit, an integer one past its range,
// a name outside an enumeration, a list one item too long. Each body has the right shape, so the
// service must answer 422 naming the member (400 for the members the spec fixes at 400).
import type { Decoder } from '../../src/platform/http/decode.ts';

export interface ValueErrorCase {
  /** The member in the decoders' field notation (`a.b[0].c`). */
  field: string;
  body: Record<string, unknown>;
  /** 422, or 400 where the body's or the member's refusal is fixed at 400 (refusedAsBadRequest). */
  status: 400 | 422;
}

/** Larger limits are left out: the body must stay far below the request size limit. */
const MAX_SAMPLE = 20_000;

const FAILS_PATTERN = ['\u0001', ' ', '#', '%', '!!', '\u00e4', 'A', '0'];

/** One value of the right JSON type that breaks one of the decoder's rules, or none. */
function badValue(d: Decoder<unknown>): { value: unknown; at: string } | null {
  const s = d.spec;
  switch (s.kind) {
    case 'string': {
      const max = s.maxLength ?? s.maxBytes;
      if (max !== undefined && max < MAX_SAMPLE) return { value: 'a'.repeat(max + 1), at: '' };
      if ((s.minLength ?? 0) > 0 || (s.minBytes ?? 0) > 0) return { value: '', at: '' };
      if (s.printableAscii) return { value: '\u0001', at: '' };
      if (s.pattern) {
        const anchored = new RegExp(`^(?:${s.pattern.source})$`, s.pattern.flags.replace(/[gy]/g, ''));
        const value = FAILS_PATTERN.find((v) => !anchored.test(v));
        if (value !== undefined) return { value, at: '' };
      }
      return null;
    }
    case 'number':
      if (s.max !== undefined) return { value: s.max + 1, at: '' };
      if (s.min !== undefined) return { value: s.min - 1, at: '' };
      return s.integral ? { value: 2 ** 53, at: '' } : null;
    case 'enum':
      return { value: `not-${s.values.join('-')}`.slice(0, 60), at: '' };
    case 'literal':
      return {
        value:
          typeof s.value === 'string'
            ? `${s.value}-other`
            : typeof s.value === 'number'
              ? s.value + 1
              : !s.value,
        at: '',
      };
    case 'array': {
      if (s.maxItems !== undefined && s.maxItems < MAX_SAMPLE / 10)
        return { value: Array.from({ length: s.maxItems + 1 }, () => null), at: '' };
      if ((s.minItems ?? 0) > 0) return { value: [], at: '' };
      const inner = badValue(s.item);
      return inner && { value: [inner.value], at: `[0]${inner.at}` };
    }
    case 'record':
      if (s.maxEntries !== undefined && s.maxEntries < MAX_SAMPLE / 10)
        return {
          value: Object.fromEntries(Array.from({ length: s.maxEntries + 1 }, (_, i) => [`k${i}`, 0])),
          at: '',
        };
      if (s.maxBytes !== undefined && s.maxBytes < MAX_SAMPLE)
        return { value: { k: 'a'.repeat(s.maxBytes) }, at: '' };
      return null;
    case 'json':
      return s.maxBytes !== undefined && s.maxBytes < MAX_SAMPLE
        ? { value: 'a'.repeat(s.maxBytes), at: '' }
        : null;
    case 'object': {
      // The first member with a rule to break; the others are left out (a missing member is a
      // value error too, so the answer stays 422).
      for (const [wire, member] of s.members) {
        const inner = badValue(member);
        if (inner) return { value: { [wire]: inner.value }, at: `.${wire}${inner.at}` };
      }
      return null;
    }
    case 'boolean':
      return null;
  }
}

/** For each member of an object decoder with a rule to break: a body breaking it. */
export function valueErrorCases(d: Decoder<unknown>): ValueErrorCase[] {
  if (d.spec.kind !== 'object') return [];
  const out: ValueErrorCase[] = [];
  for (const [wire, member] of d.spec.members) {
    const bad = badValue(member);
    if (bad)
      out.push({
        field: `${wire}${bad.at}`,
        body: { [wire]: bad.value },
        status: d.badRequest || member.badRequest ? 400 : 422,
      });
  }
  return out;
}
