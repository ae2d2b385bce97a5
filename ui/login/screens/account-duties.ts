// accept_terms {version}, complete_profile {fields} and cancel_deletion {}: what the account is
// asked after signing in.
import { checkbox, field, h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { stepForm } from './form.js';
import type { Screen } from './screen.js';

export const termsScreen: Screen = {
  type: 'accept_terms',
  title: 'terms.title',
  render(ctx) {
    const version = String(ctx.action.options?.version ?? '');
    const accept = checkbox(t('terms.accept', { version }), 'accept');
    accept.input.required = true;
    return stepForm(t('terms.submit'), [h('p', {}, t('terms.help')), accept.wrap], () =>
      ctx.step('terms', { version }),
    );
  },
};

export const profileScreen: Screen = {
  type: 'complete_profile',
  title: 'profile.title',
  render(ctx) {
    const names = Array.isArray(ctx.action.options?.fields) ? (ctx.action.options.fields as string[]) : [];
    const inputs = names.map((n) => ({ n, f: field(n, { name: n, type: 'text', required: true }) }));
    return stepForm(
      t('profile.submit'),
      [h('p', {}, t('profile.help')), ...inputs.map((i) => i.f.wrap)],
      () =>
        ctx.step('profile', { fields: Object.fromEntries(inputs.map((i) => [i.n, i.f.input.value.trim()])) }),
    );
  },
};

export const cancelDeletionScreen: Screen = {
  type: 'cancel_deletion',
  title: 'deletion.title',
  render(ctx) {
    return stepForm(t('deletion.keep'), [h('p', {}, t('deletion.help'))], () =>
      ctx.step('cancel-deletion', {}),
    );
  },
};
