// Named placeholders for long statements: a statement with twenty parameters reads `${p.now}`
// instead of `$8`, and the values are given by name, so a parameter cannot shift by one. The
// SQL text still uses $n, so both drivers and named (prepared) statements work unchanged.

export type Placeholders<K extends string> = { readonly [k in K]: string };

export interface NamedParams<K extends string> {
  /** `$n` for each name, in the order of the list. */
  readonly p: Placeholders<K>;
  readonly count: number;
  /** The value list for a statement written with `p`. */
  values(v: { readonly [k in K]: unknown }): unknown[];
}

export function namedParams<const K extends string>(names: readonly K[]): NamedParams<K> {
  if (new Set(names).size !== names.length) throw new Error('a parameter name is listed twice');
  const p = Object.fromEntries(names.map((n, i) => [n, `$${i + 1}`])) as Placeholders<K>;
  return { p, count: names.length, values: (v) => names.map((n) => v[n]) };
}
