// A form whose submit button is disabled while its step runs, so a double press sends one step.
import { h } from '../../lib/dom.js';

export function stepForm(
  submitLabel: string,
  fields: HTMLElement[],
  onSubmit: () => Promise<void>,
  extra: HTMLElement[] = [],
): HTMLFormElement {
  const button = h('button', { type: 'submit', class: 'primary' }, submitLabel);
  const form = h('form', { novalidate: false }, ...fields, button, ...extra);
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (button.disabled) return;
    button.disabled = true;
    onSubmit().finally(() => {
      button.disabled = false;
    });
  });
  return form;
}
