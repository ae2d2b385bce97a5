// A tiny element builder: every page is plain DOM, and text always goes in as text, never HTML.

type Attrs = Record<string, string | boolean | undefined>;
type Child = Node | string | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    el.setAttribute(name, value === true ? '' : value);
  }
  for (const c of children) if (c !== null && c !== undefined && c !== false) el.append(c);
  return el;
}

let uid = 0;
/** A unique id for label/input pairs. */
export const newId = (base: string): string => `${base}-${++uid}`;

/** A labelled input; the label is always visible and tied to the input. */
export function field(
  label: string,
  attrs: Attrs & { name: string },
): { wrap: HTMLElement; input: HTMLInputElement } {
  const id = newId(attrs.name);
  const input = h('input', { id, ...attrs });
  return { wrap: h('div', { class: 'field' }, h('label', { for: id }, label), input), input };
}

/** A password field with the rule it must meet written under it, tied by aria-describedby. */
export function passwordField(
  label: string,
  rule: string,
  attrs: Attrs & { name: string },
): { wrap: HTMLElement; input: HTMLInputElement } {
  const hintId = newId(`${attrs.name}-rule`);
  const f = field(label, { ...attrs, type: 'password', 'aria-describedby': hintId });
  f.wrap.append(h('p', { id: hintId, class: 'small' }, rule));
  return f;
}

/** A labelled checkbox. */
export function checkbox(label: string, name: string): { wrap: HTMLElement; input: HTMLInputElement } {
  const id = newId(name);
  const input = h('input', { id, type: 'checkbox', name });
  return { wrap: h('div', { class: 'check' }, input, h('label', { for: id }, label)), input };
}
