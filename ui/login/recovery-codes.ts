// The recovery codes the TOTP activation answers, shown once: the user confirms saving them
// before the sign-in goes on.
import { checkbox, h } from '../lib/dom.js';
import { t } from '../lib/i18n.js';

export function recoveryCodesView(codes: string[], onContinue: () => void): HTMLElement {
  const confirm = checkbox(t('codes.confirm'), 'saved');
  const next = h('button', { type: 'submit', class: 'primary', disabled: true }, t('codes.continue'));
  confirm.input.addEventListener('change', () => {
    next.disabled = !confirm.input.checked;
  });
  const form = h(
    'form',
    {},
    h('p', {}, t('codes.help')),
    h('ol', { class: 'codes' }, ...codes.map((c) => h('li', {}, h('code', {}, c)))),
    confirm.wrap,
    next,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    if (confirm.input.checked) onContinue();
  });
  return form;
}
