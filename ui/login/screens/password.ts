// password {password, identifier?}: the first factor. When nobody is identified yet the server
// offers it with an identifier field, and this screen asks for both at once.
import { field, h } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { stepForm } from './form.js';
import type { Screen } from './screen.js';
import { sessionOptions } from './session-options.js';

export const passwordScreen: Screen = {
  type: 'password',
  supersedes: ['identify'],
  title: 'password.title',
  alternative: 'alt.password',
  render(ctx) {
    const needsIdentifier = ctx.action.fields.includes('identifier');
    const id = field(t('password.identifier'), {
      name: 'identifier',
      type: 'text',
      autocomplete: 'username',
      required: true,
      autocapitalize: 'none',
      spellcheck: 'false',
    });
    const pw = field(t('password.password'), {
      name: 'password',
      type: 'password',
      autocomplete: 'current-password',
      required: true,
    });
    const options = sessionOptions();
    const who = ctx.state.user?.email_hint ?? ctx.state.user?.display_name;
    const fields = needsIdentifier ? [id.wrap, pw.wrap] : [pw.wrap];
    if (!needsIdentifier && who) fields.unshift(h('p', { class: 'who' }, who));
    return stepForm(t('password.submit'), [...fields, options.element], async () => {
      await options.apply(ctx);
      const body: Record<string, unknown> = { password: pw.input.value };
      if (needsIdentifier) body.identifier = id.input.value.trim();
      await ctx.step('password', body, { failed: 'password.failed' });
    });
  },
};
