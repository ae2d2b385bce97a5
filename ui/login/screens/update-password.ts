// update_password {new_password}: the administrator asked for a new password, or the person proved
// a forgotten-password code (options.reset) and chooses the new one.
import { h, passwordField } from '../../lib/dom.js';
import { t } from '../../lib/i18n.js';
import { stepForm } from './form.js';
import type { Screen } from './screen.js';

// The server's minimum (users/password-rules.ts); it checks again and answers a problem if shorter.
const MIN_LENGTH = 8;

export const updatePasswordScreen: Screen = {
  type: 'update_password',
  title: 'update_password.title',
  titleOf: (action) => (action.options?.reset === true ? 'reset.new_title' : 'update_password.title'),
  render(ctx) {
    const reset = ctx.action.options?.reset === true;
    const pw = passwordField(t('update_password.password'), t('password.rule'), {
      name: 'new_password',
      autocomplete: 'new-password',
      minlength: String(MIN_LENGTH),
      required: true,
    });
    return stepForm(
      t('update_password.submit'),
      [h('p', {}, t(reset ? 'reset.new_help' : 'update_password.help')), pw.wrap],
      () => ctx.step('password/update', { new_password: pw.input.value }),
    );
  },
};
